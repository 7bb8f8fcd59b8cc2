// One matrix row per LANES lanes: y = W x for a single input vector, the step's workhorse.
//
// Specialisation constants (phonon_web/lm_ops.py):
//   K         input length (the weights' logical columns); KP: K rounded up to 32 (q8 rows are padded)
//   PROLOGUE  how the workgroup builds the input vector x in workgroup memory (P_* below)
//   EPILOGUE  what happens to each row's sum (E_* below)
//   KV_F16    the KV cache holds f16 pairs (pack2x16float) rather than f32 (E_QKV_ROPE only)
//   SPLITS    P_ATTN_MERGE: the attention's splits per head (1 otherwise)
//   LANES     lanes per row (8 to 128, a power of two); the workgroup (256 invocations) does
//             ROWS = 256 / LANES rows. phonon_web/lm_ops.py chooses it from the rows and K.
// Each lane reads 16 bytes of a row at a time (16 q8 values, 8 f16 or 4 f32). Rows come from up to 8
// segments (tensors with the same K, each with its own kind, offsets and bias), so several matrices
// that read the same input share one dispatch.
//
// Why the loads come first: a step's GEMV costs latency, not bandwidth (a 1536 x 512 int8 matrix is a
// fraction of a microsecond of an H200's bandwidth; its dispatch takes ten). So every invocation first
// issues each load that waits on nothing this kernel computes (its share of the q8 weight rows with
// their scales, its elements of the input with the norm's weights and the modulations, its row's bias,
// residual and gate, the attention splits' outputs) and only then waits: for the gate, the prologue's
// reduction and the dot products. One memory latency, where the same loads made where they are used
// paid four or five in a row. Drivers do not hoist loads across barriers or unroll loops whose turns
// wait on loads, so the code does it itself: fixed-count blocks guarded by constants.
//
// Bindings are the same for every variant; a variant that does not use one gets a small dummy buffer.
//   src    the input (P_LOAD, P_LAYERNORM, P_ADALN, P_SILU at src_offset; P_ATTN_MERGE: the partials)
//   aux    P_ADALN: the modulations; E_GATED_RESIDUAL: the gates; E_QKV_ROPE: the RoPE table;
//          E_COND_EOS: the flow head's time embedding
//   dst    the output rows at dst_offset (E_RESIDUAL / E_GATED_RESIDUAL add to them)
//   extra  E_QKV_ROPE: the KV cache; E_COND_EOS: the end-of-speech logits; P_ATTN_MERGE: the
//          alignment rows; P_NOISE: where the noise is kept for step_end

const WG_SIZE: u32 = 256u;
const ROWS: u32 = WG_SIZE / LANES;
const CHUNKS: u32 = KP / 16u;                         // 16-value chunks of a q8 row
const TURNS: u32 = (CHUNKS + LANES - 1u) / LANES;     // chunks per lane
const EARLY_ROWS: bool = TURNS <= 4u;                 // q8 row shares loaded up front (else in the dot)
const XTURNS: u32 = (KP + WG_SIZE - 1u) / WG_SIZE;    // input elements per invocation
const EARLY_X: bool = XTURNS <= 8u;                   // inputs loaded up front (else in the prologue)

const P_LOAD: u32 = 0u;        // x = src
const P_LAYERNORM: u32 = 1u;   // x = LayerNorm(src) (affine if ln_affine)
const P_ADALN: u32 = 2u;       // x = LayerNorm(src) * (1 + aux[mod_scale..]) + aux[mod_shift..]
const P_SILU: u32 = 3u;        // x = silu(src)
const P_ATTN_MERGE: u32 = 4u;  // x = the attention output, merged from the split partials
const P_NOISE: u32 = 5u;       // x = noise(seed, frame) * sqrt(temperature), K channels

const E_STORE: u32 = 0u;
const E_GELU: u32 = 1u;
const E_SILU: u32 = 2u;
const E_RESIDUAL: u32 = 3u;        // dst += y
const E_GATED_RESIDUAL: u32 = 4u;  // dst += aux[mod_gate + row] * y
const E_QKV_ROPE: u32 = 5u;        // rotate q and k, keep q in dst, write k and v into the cache
const E_COND_EOS: u32 = 6u;        // segment 0: dst = y + aux[aux_offset + row]; first row of segment 1: eos

const READS_SRC: bool = PROLOGUE == P_LOAD || PROLOGUE == P_SILU || PROLOGUE == P_LAYERNORM
    || PROLOGUE == P_ADALN;
const NORMS: bool = PROLOGUE == P_LAYERNORM || PROLOGUE == P_ADALN;
// the merge's split outputs loaded up front: two elements an invocation, eight splits each
const EARLY_MERGE: bool = PROLOGUE == P_ATTN_MERGE && SPLITS <= 8u && KP <= 2u * WG_SIZE;

struct Segment {
    end: u32,        // one past the segment's last row (rows are numbered across segments)
    kind: u32,       // KIND_Q8 / KIND_F16 / KIND_F32
    word: u32,       // data offset in words
    scales: u32,     // q8 scales offset in words
    padded: u32,     // q8 padded row length (K otherwise)
    bias: u32,       // bias offset in words
    bias_kind: u32,
    has_bias: u32,
}

struct Params {
    gate: u32, rows: u32, n_segments: u32, src_offset: u32,
    ln_w: u32, ln_b: u32, ln_kind: u32, ln_affine: u32,
    ln_eps: f32, mod_shift: u32, mod_scale: u32, mod_gate: u32,
    dst_offset: u32, normed_offset: u32, write_normed: u32, layer: u32,
    head_dim: u32, heads: u32, _pad2: u32, part_stride: u32,
    align: u32, align_head: u32, align_stride: u32, layers: u32,
    kv_row_words: u32, aux_offset: u32, _pad0: u32, _pad1: u32,
    segs: array<Segment, 8>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<f32>;
@group(0) @binding(4) var<storage, read> aux: array<f32>;
@group(0) @binding(5) var<storage, read_write> dst: array<f32>;
@group(0) @binding(6) var<storage, read_write> extra: array<u32>;

var<workgroup> xs: array<f32, KP>;
var<workgroup> totals: array<f32, ROWS>;

// (segment index, row within the segment) of a global row
fn segment_of(row: u32) -> vec2<u32> {
    var s = 0u;
    var start = 0u;
    loop {
        if (s + 1u >= params.n_segments || row < params.segs[s].end) { break; }
        start = params.segs[s].end;
        s += 1u;
    }
    return vec2<u32>(s, row - start);
}

fn bias_of(row: u32) -> f32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    if (seg.has_bias == 0u) { return 0.0; }
    return vector_at(seg.bias_kind, seg.bias, where_.y);
}

// ---- the early loads ----------------------------------------------------------------------------
// A lane's share of a q8 row: its chunks lane, lane + LANES, ... (at most 4), with their scales.
struct RowShare {
    w0: vec4<u32>, w1: vec4<u32>, w2: vec4<u32>, w3: vec4<u32>,
    scales: vec4<f32>,  // 0 for a turn past the row's end, so that turn adds nothing
    q8: bool,           // false: the row is f16 or f32 (or there is no row), read in the dot instead
}

// Words at..at + 3 of the weights. (Reading them as one 16-byte element through an array<vec4<u32>>
// view of the weights, with every q8 tensor placed on 16 bytes, measured no faster on the H200.)
fn words4(at: u32) -> vec4<u32> {
    return vec4<u32>(weights[at], weights[at + 1u], weights[at + 2u], weights[at + 3u]);
}

// The chunk a lane reads in a turn, kept inside the row so that a turn past its end still reads
// in bounds (its scale is 0).
fn lane_chunk(lane: u32, turn: u32) -> u32 {
    return min(lane + turn * LANES, CHUNKS - 1u);
}

fn load_row_share(row: u32, lane: u32) -> RowShare {
    var r: RowShare;
    if (!EARLY_ROWS || row >= params.rows) { return r; }
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    if (seg.kind != KIND_Q8) { return r; }
    r.q8 = true;
    // every q8 segment of a gemv is padded to KP (lm_ops checks)
    let base = seg.word + where_.y * (KP / 4u);
    r.w0 = words4(base + lane_chunk(lane, 0u) * 4u);
    r.scales.x = q8_scale(seg.scales, where_.y, KP, lane_chunk(lane, 0u) / 2u);
    if (TURNS > 1u) {
        r.w1 = words4(base + lane_chunk(lane, 1u) * 4u);
        r.scales.y = q8_scale(seg.scales, where_.y, KP, lane_chunk(lane, 1u) / 2u);
    }
    if (TURNS > 2u) {
        r.w2 = words4(base + lane_chunk(lane, 2u) * 4u);
        r.scales.z = q8_scale(seg.scales, where_.y, KP, lane_chunk(lane, 2u) / 2u);
    }
    if (TURNS > 3u) {
        r.w3 = words4(base + lane_chunk(lane, 3u) * 4u);
        r.scales.w = q8_scale(seg.scales, where_.y, KP, lane_chunk(lane, 3u) / 2u);
    }
    let in_row = lane + vec4<u32>(0u, 1u, 2u, 3u) * LANES < vec4<u32>(CHUNKS);
    r.scales = select(vec4<f32>(0.0), r.scales, in_row);
    return r;
}

// What the prologue needs of element i of x (0 past K; the loads themselves stay in bounds).
struct Elem { x: f32, w: f32, b: f32, scale: f32, shift: f32 }

fn load_elem(i: u32) -> Elem {
    let j = min(i, K - 1u);
    var e = Elem(src[params.src_offset + j], 1.0, 0.0, 0.0, 0.0);
    if (NORMS && params.ln_affine != 0u) {
        e.w = vector_at(params.ln_kind, params.ln_w, j);
        e.b = vector_at(params.ln_kind, params.ln_b, j);
    }
    if (PROLOGUE == P_ADALN) {
        e.scale = aux[params.mod_scale + j];
        e.shift = aux[params.mod_shift + j];
    }
    if (i >= K) { e.x = 0.0; }
    return e;
}

// An invocation's elements lid, lid + 256, ... (XTURNS of them, at most 8).
struct Inputs { e0: Elem, e1: Elem, e2: Elem, e3: Elem, e4: Elem, e5: Elem, e6: Elem, e7: Elem }

fn load_inputs(lid: u32) -> Inputs {
    var v: Inputs;
    if (!READS_SRC || !EARLY_X) { return v; }
    v.e0 = load_elem(lid);
    if (XTURNS > 1u) { v.e1 = load_elem(lid + WG_SIZE); }
    if (XTURNS > 2u) { v.e2 = load_elem(lid + 2u * WG_SIZE); }
    if (XTURNS > 3u) { v.e3 = load_elem(lid + 3u * WG_SIZE); }
    if (XTURNS > 4u) { v.e4 = load_elem(lid + 4u * WG_SIZE); }
    if (XTURNS > 5u) { v.e5 = load_elem(lid + 5u * WG_SIZE); }
    if (XTURNS > 6u) { v.e6 = load_elem(lid + 6u * WG_SIZE); }
    if (XTURNS > 7u) { v.e7 = load_elem(lid + 7u * WG_SIZE); }
    return v;
}

// P_ATTN_MERGE: one element's outputs of its head's splits 0..7 (a split past SPLITS reads the last
// one again; its weight is 0), and this invocation's part's (max, sum) when it has one.
struct MergeInputs { a0: vec4<f32>, a1: vec4<f32>, b0: vec4<f32>, b1: vec4<f32>, stats: vec2<f32> }

fn split_outputs(i: u32) -> array<vec4<f32>, 2> {
    let j = min(i, K - 1u);
    let head = j / params.head_dim;
    let d = j % params.head_dim;
    let t = head * SPLITS;
    let last = t + SPLITS - 1u;
    let s = params.part_stride;
    return array<vec4<f32>, 2>(
        vec4<f32>(src[t * s + d], src[min(t + 1u, last) * s + d],
                  src[min(t + 2u, last) * s + d], src[min(t + 3u, last) * s + d]),
        vec4<f32>(src[min(t + 4u, last) * s + d], src[min(t + 5u, last) * s + d],
                  src[min(t + 6u, last) * s + d], src[min(t + 7u, last) * s + d]));
}

fn load_merge_inputs(lid: u32) -> MergeInputs {
    var v: MergeInputs;
    if (PROLOGUE != P_ATTN_MERGE) { return v; }
    if (lid < params.heads * SPLITS) {
        let at = lid * params.part_stride + params.head_dim;
        v.stats = vec2<f32>(src[at], src[at + 1u]);
    }
    if (EARLY_MERGE) {
        let a = split_outputs(lid);
        v.a0 = a[0];
        v.a1 = a[1];
        if (KP > WG_SIZE) {
            let b = split_outputs(lid + WG_SIZE);
            v.b0 = b[0];
            v.b1 = b[1];
        }
    }
    return v;
}

// The epilogue's reads. E_QKV_ROPE (invocation p < ROWS / 2 takes rows r = 2p, 2p + 1 of the group):
// a, b the two biases, c, d the cosine and sine, pos the KV position. Otherwise (invocation
// r < ROWS takes row r): a the bias, b the old value (residuals) or the time embedding (E_COND_EOS),
// c the gate (E_GATED_RESIDUAL).
struct Tail { a: f32, b: f32, c: f32, d: f32, pos: u32 }

fn load_tail(group: u32, lid: u32) -> Tail {
    var t: Tail;
    if (EPILOGUE == E_QKV_ROPE) {
        let r = group * ROWS + 2u * lid;
        if (lid < ROWS / 2u && r < params.rows) {
            t.pos = state[S_POS];
            t.a = bias_of(r);
            t.b = bias_of(r + 1u);
            if (r < 2u * params.heads * params.head_dim) {
                let j = (r % params.head_dim) / 2u;
                let at = (t.pos * (params.head_dim / 2u) + j) * 2u;
                t.c = aux[at];
                t.d = aux[at + 1u];
            }
        }
        return t;
    }
    let r = group * ROWS + lid;
    if (lid < ROWS && r < params.rows) {
        t.a = bias_of(r);
        if (EPILOGUE == E_RESIDUAL || EPILOGUE == E_GATED_RESIDUAL) { t.b = dst[params.dst_offset + r]; }
        if (EPILOGUE == E_GATED_RESIDUAL) { t.c = aux[params.mod_gate + r]; }
        if (EPILOGUE == E_COND_EOS && r < params.segs[0].end) { t.b = aux[params.aux_offset + r]; }
    }
    return t;
}

// ---- prologues ----------------------------------------------------------------------------------
fn put_x(i: u32, v: f32) {
    if (i < KP) { xs[i] = v; }
}

fn sum_sq(e: Elem) -> vec2<f32> {
    return vec2<f32>(e.x, e.x * e.x);
}

// The prologue's value of element i (0 past K) once the norm's statistics are known.
fn finished(e: Elem, i: u32, mean: f32, rstd: f32) -> f32 {
    if (i >= K) { return 0.0; }
    if (PROLOGUE == P_SILU) { return silu(e.x); }
    if (!NORMS) { return e.x; }
    var v = (e.x - mean) * rstd * e.w + e.b;
    if (PROLOGUE == P_ADALN) { v = v * (1.0 + e.scale) + e.shift; }
    return v;
}

// P_LOAD, P_SILU, P_LAYERNORM, P_ADALN from the early loads. One pass for the norm: sum and sum of
// squares together (var = E[x^2] - mean^2, in f32; the residual streams here have |mean| well below
// their spread, so the cancellation costs ~1e-7 relative).
fn early_x_into_xs(ids: Ids, v: Inputs) {
    var mean = 0.0;
    var rstd = 1.0;
    if (NORMS) {
        let s = sum_sq(v.e0) + sum_sq(v.e1) + sum_sq(v.e2) + sum_sq(v.e3)
            + sum_sq(v.e4) + sum_sq(v.e5) + sum_sq(v.e6) + sum_sq(v.e7);
        let sums = workgroup_sum2(s, ids) / f32(K);
        mean = sums.x;
        rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    }
    let i = ids.lid;
    put_x(i, finished(v.e0, i, mean, rstd));
    if (XTURNS > 1u) { put_x(i + WG_SIZE, finished(v.e1, i + WG_SIZE, mean, rstd)); }
    if (XTURNS > 2u) { put_x(i + 2u * WG_SIZE, finished(v.e2, i + 2u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 3u) { put_x(i + 3u * WG_SIZE, finished(v.e3, i + 3u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 4u) { put_x(i + 4u * WG_SIZE, finished(v.e4, i + 4u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 5u) { put_x(i + 5u * WG_SIZE, finished(v.e5, i + 5u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 6u) { put_x(i + 6u * WG_SIZE, finished(v.e6, i + 6u * WG_SIZE, mean, rstd)); }
    if (XTURNS > 7u) { put_x(i + 7u * WG_SIZE, finished(v.e7, i + 7u * WG_SIZE, mean, rstd)); }
}

// The same for inputs too long to hold in registers (K > 2048): loaded here, a turn at a time.
fn late_x_into_xs(ids: Ids) {
    var s = vec2<f32>(0.0);
    for (var i = ids.lid; i < KP; i += WG_SIZE) {
        let e = load_elem(i);
        xs[i] = e.x;
        s += sum_sq(e);
    }
    var mean = 0.0;
    var rstd = 1.0;
    if (NORMS) {
        let sums = workgroup_sum2(s, ids) / f32(K);
        mean = sums.x;
        rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    }
    for (var i = ids.lid; i < KP; i += WG_SIZE) {
        var e = load_elem(i);
        e.x = xs[i];
        xs[i] = finished(e, i, mean, rstd);
    }
}

// Split-softmax merge (P_ATTN_MERGE): part t = (head, split) left its unnormalised output, its maximum
// score m and its sum l of exp(score - m). Each part's weight is exp(m - M) / L with the head's
// M = max m and L = sum l exp(m - M). The (m, l) pairs go through workgroup memory once.
var<workgroup> part_max: array<f32, 256>;
var<workgroup> merge_weights: array<f32, 256>;  // (head, split): exp(m_split - m_head) / l_head
var<workgroup> head_stats: array<vec2<f32>, 256>;  // per head: (M, L)

// Element i of the merged output from its splits' outputs (splits 0..7; past SPLITS weigh nothing).
fn merged(i: u32, a0: vec4<f32>, a1: vec4<f32>) -> f32 {
    if (i >= K) { return 0.0; }
    let t = (i / params.head_dim) * SPLITS;
    let last = t + SPLITS - 1u;
    let w0 = vec4<f32>(merge_weights[t], merge_weights[min(t + 1u, last)],
                       merge_weights[min(t + 2u, last)], merge_weights[min(t + 3u, last)]);
    let w1 = vec4<f32>(merge_weights[min(t + 4u, last)], merge_weights[min(t + 5u, last)],
                       merge_weights[min(t + 6u, last)], merge_weights[min(t + 7u, last)]);
    let n = vec4<u32>(0u, 1u, 2u, 3u);
    return dot(a0, select(vec4<f32>(0.0), w0, n < vec4<u32>(SPLITS)))
        + dot(a1, select(vec4<f32>(0.0), w1, n + 4u < vec4<u32>(SPLITS)));
}

fn attention_merge_into_xs(ids: Ids, v: MergeInputs, first_group: bool) {
    let parts = params.heads * SPLITS;
    if (ids.lid < parts) { part_max[ids.lid] = v.stats.x; }
    workgroupBarrier();
    if (ids.lid < params.heads) {
        var m = -3.0e38;
        for (var s = 0u; s < SPLITS; s++) { m = max(m, part_max[ids.lid * SPLITS + s]); }
        head_stats[ids.lid].x = m;
    }
    workgroupBarrier();
    if (ids.lid < parts) {
        merge_weights[ids.lid] = exp(part_max[ids.lid] - head_stats[ids.lid / SPLITS].x);
        part_max[ids.lid] = v.stats.y * merge_weights[ids.lid];  // now this part's share of L
    }
    workgroupBarrier();
    if (ids.lid < params.heads) {
        var total = 0.0;
        for (var s = 0u; s < SPLITS; s++) { total += part_max[ids.lid * SPLITS + s]; }
        head_stats[ids.lid].y = total;
    }
    workgroupBarrier();
    if (ids.lid < parts) { merge_weights[ids.lid] /= head_stats[ids.lid / SPLITS].y; }
    workgroupBarrier();
    if (EARLY_MERGE) {
        put_x(ids.lid, merged(ids.lid, v.a0, v.a1));
        if (KP > WG_SIZE) { put_x(ids.lid + WG_SIZE, merged(ids.lid + WG_SIZE, v.b0, v.b1)); }
    } else {
        // more splits or elements than the early loads hold: eight splits a turn, loaded here
        for (var i = ids.lid; i < KP; i += WG_SIZE) {
            var value = 0.0;
            if (i < K) {
                let head = i / params.head_dim;
                let d = i % params.head_dim;
                let last = head * SPLITS + SPLITS - 1u;
                for (var s = 0u; s < SPLITS; s += 8u) {
                    let t = head * SPLITS + s;
                    let st = params.part_stride;
                    let a0 = vec4<f32>(src[t * st + d], src[min(t + 1u, last) * st + d],
                                       src[min(t + 2u, last) * st + d], src[min(t + 3u, last) * st + d]);
                    let a1 = vec4<f32>(src[min(t + 4u, last) * st + d], src[min(t + 5u, last) * st + d],
                                       src[min(t + 6u, last) * st + d], src[min(t + 7u, last) * st + d]);
                    let w0 = vec4<f32>(merge_weights[t], merge_weights[min(t + 1u, last)],
                                       merge_weights[min(t + 2u, last)], merge_weights[min(t + 3u, last)]);
                    let w1 = vec4<f32>(merge_weights[min(t + 4u, last)], merge_weights[min(t + 5u, last)],
                                       merge_weights[min(t + 6u, last)], merge_weights[min(t + 7u, last)]);
                    let n = s + vec4<u32>(0u, 1u, 2u, 3u);
                    value += dot(a0, select(vec4<f32>(0.0), w0, n < vec4<u32>(SPLITS)))
                        + dot(a1, select(vec4<f32>(0.0), w1, n + 4u < vec4<u32>(SPLITS)));
                }
            }
            xs[i] = value;
        }
    }
    // The alignment layer: attention_step left the raw scores of the text keys; turn them into
    // probabilities with the merged statistics (one workgroup does it).
    if (params.align != 0u && first_group) {
        let stats = head_stats[params.align_head];
        let row = state[S_FRAMES] * params.align_stride;
        for (var t = ids.lid; t < state[S_TEXT]; t += WG_SIZE) {
            let score = bitcast<f32>(extra[row + t]);
            extra[row + t] = bitcast<u32>(exp(score - stats.x) / stats.y);
        }
    }
}

fn prologue(ids: Ids, inputs: Inputs, merge: MergeInputs, first_group: bool) {
    if (READS_SRC) {
        if (EARLY_X) { early_x_into_xs(ids, inputs); } else { late_x_into_xs(ids); }
    } else if (PROLOGUE == P_ATTN_MERGE) {
        attention_merge_into_xs(ids, merge, first_group);
    } else if (PROLOGUE == P_NOISE) {
        let seed = state[S_SEED];
        let frame = state[S_FRAMES];
        let scale = bitcast<f32>(state[S_NOISE_SCALE]);
        for (var i = ids.lid; i < KP; i += WG_SIZE) {
            var v = 0.0;
            if (i < K) { v = noise_value(seed, frame, i) * scale; }
            xs[i] = v;
            if (first_group && i < K) { extra[i] = bitcast<u32>(v); }
        }
    }
    // (each invocation reads back only the elements it wrote, so no barrier)
    if (params.write_normed != 0u && first_group) {
        for (var i = ids.lid; i < K; i += WG_SIZE) { dst[params.normed_offset + i] = xs[i]; }
    }
}

// ---- the matrix rows ----------------------------------------------------------------------------
fn xs4(i: u32) -> vec4<f32> {
    return vec4<f32>(xs[i], xs[i + 1u], xs[i + 2u], xs[i + 3u]);
}

fn w4(i: u32) -> vec4<f32> {
    return vec4<f32>(bitcast<f32>(weights[i]), bitcast<f32>(weights[i + 1u]),
                     bitcast<f32>(weights[i + 2u]), bitcast<f32>(weights[i + 3u]));
}

fn h2(i: u32) -> vec4<f32> {
    return vec4<f32>(unpack2x16float(weights[i]), unpack2x16float(weights[i + 1u]));
}

fn chunk_dot(w: vec4<u32>, chunk: u32) -> f32 {
    let x = chunk * 16u;
    return dot(vec4<f32>(unpack4xI8(w.x)), xs4(x)) + dot(vec4<f32>(unpack4xI8(w.y)), xs4(x + 4u))
        + dot(vec4<f32>(unpack4xI8(w.z)), xs4(x + 8u)) + dot(vec4<f32>(unpack4xI8(w.w)), xs4(x + 12u));
}

// This lane's share of a q8 row's dot product with xs, from its early loads.
fn share_dot(r: RowShare, lane: u32) -> f32 {
    var acc = r.scales.x * chunk_dot(r.w0, lane_chunk(lane, 0u));
    if (TURNS > 1u) { acc += r.scales.y * chunk_dot(r.w1, lane_chunk(lane, 1u)); }
    if (TURNS > 2u) { acc += r.scales.z * chunk_dot(r.w2, lane_chunk(lane, 2u)); }
    if (TURNS > 3u) { acc += r.scales.w * chunk_dot(r.w3, lane_chunk(lane, 3u)); }
    return acc;
}

// This lane's share of one row's dot product with xs, loading as it goes: f16 and f32 rows, and q8
// rows too long for the early loads.
fn row_dot(row: u32, lane: u32) -> f32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    let local = where_.y;
    var acc = 0.0;
    if (seg.kind == KIND_Q8) {
        let row_base = seg.word + local * (seg.padded / 4u);
        for (var c = lane; c < seg.padded / 16u; c += LANES) {
            acc += chunk_dot(words4(row_base + c * 4u), c) * q8_scale(seg.scales, local, seg.padded, c / 2u);
        }
    } else if (seg.kind == KIND_F16) {
        let row_base = seg.word + local * (K / 2u);
        for (var c = lane; c < K / 8u; c += LANES) {
            let w = row_base + c * 4u;
            let x = c * 8u;
            acc += dot(h2(w), xs4(x)) + dot(h2(w + 2u), xs4(x + 4u));
        }
    } else {
        let row_base = seg.word + local * K;
        for (var c = lane; c < K / 4u; c += LANES) {
            acc += dot(w4(row_base + c * 4u), xs4(c * 4u));
        }
    }
    return acc;
}

// ---- epilogues ----------------------------------------------------------------------------------
fn kv_write(pos: u32, which: u32, dim: u32, value: vec2<f32>) {
    let base = ((pos * params.layers + params.layer) * 2u + which) * params.kv_row_words;
    if (KV_F16) {
        extra[base + dim / 2u] = pack2x16float(value);
    } else {
        extra[base + dim] = bitcast<u32>(value.x);
        extra[base + dim + 1u] = bitcast<u32>(value.y);
    }
}

// Rows r and r + 1 (an interleaved RoPE pair of q or k, or two values of v), biases added.
fn qkv_pair(r: u32, a: f32, b: f32, t: Tail) {
    let hidden = params.heads * params.head_dim;
    if (r < 2u * hidden) {
        let x = a * t.c - b * t.d;
        let y = b * t.c + a * t.d;
        if (r < hidden) {
            dst[params.dst_offset + r] = x;
            dst[params.dst_offset + r + 1u] = y;
        } else {
            kv_write(t.pos, 0u, r - hidden, vec2<f32>(x, y));
        }
    } else {
        kv_write(t.pos, 1u, r - 2u * hidden, vec2<f32>(a, b));
    }
}

fn end_of_speech(logit: f32) {
    let frame = state[S_FRAMES];
    extra[frame] = bitcast<u32>(logit);
    let threshold = bitcast<f32>(state[S_EOS_THRESHOLD]);
    if (state[S_END] == 0u && frame >= state[S_MIN_FRAMES] && logit > threshold) {
        state[S_END] = min(frame + 1u + state[S_FRAMES_AFTER_EOS], state[S_BUDGET]);
        state[S_EOS_FRAME] = frame;
    }
}

fn epilogue(row: u32, value: f32, t: Tail) {
    let v = value + t.a;
    let out = params.dst_offset + row;
    if (EPILOGUE == E_STORE) {
        dst[out] = v;
    } else if (EPILOGUE == E_GELU) {
        dst[out] = gelu(v);
    } else if (EPILOGUE == E_SILU) {
        dst[out] = silu(v);
    } else if (EPILOGUE == E_RESIDUAL) {
        dst[out] = t.b + v;
    } else if (EPILOGUE == E_GATED_RESIDUAL) {
        dst[out] = t.b + t.c * v;
    } else if (EPILOGUE == E_COND_EOS) {
        let cond_rows = params.segs[0].end;
        if (row < cond_rows) {
            dst[out] = v + t.b;
        } else if (row == cond_rows) {
            end_of_speech(v);
        }
    }
}

@compute @workgroup_size(256)
fn main(ids: Ids) {
    let group = ids.wg.x + ids.wg.y * ids.nwg.x;
    let local_row = ids.lid / LANES;
    let lane = ids.lid % LANES;
    let row = group * ROWS + local_row;
    // Every load that waits on nothing this kernel computes, issued before the first wait.
    let share = load_row_share(row, lane);
    let inputs = load_inputs(ids.lid);
    let merge = load_merge_inputs(ids.lid);
    let tail = load_tail(group, ids.lid);
    if (skip_workgroup(params.gate, ids.lid)) { return; }

    prologue(ids, inputs, merge, group == 0u);
    workgroupBarrier();

    var acc = 0.0;
    if (share.q8) {
        acc = share_dot(share, lane);
    } else if (row < params.rows) {
        acc = row_dot(row, lane);
    }
    let total = lanes_sum(acc, ids, LANES);
    if (lane == 0u) { totals[local_row] = total; }
    workgroupBarrier();

    if (EPILOGUE == E_QKV_ROPE) {
        let r = group * ROWS + 2u * ids.lid;
        if (ids.lid < ROWS / 2u && r < params.rows) {
            qkv_pair(r, totals[2u * ids.lid] + tail.a, totals[2u * ids.lid + 1u] + tail.b, tail);
        }
    } else if (ids.lid < ROWS) {
        let r = group * ROWS + ids.lid;
        if (r < params.rows) { epilogue(r, totals[ids.lid], tail); }
    }
}
