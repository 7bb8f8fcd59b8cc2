// One matrix row per LANES lanes: y = W x for a single input vector, the step's workhorse.
//
// Specialisation constants (phonon_web/lm_ops.py):
//   K         input length (the weights' logical columns); KP: K rounded up to 32 (q8 rows are padded)
//   PROLOGUE  how the workgroup builds the input vector x in workgroup memory (P_* below)
//   EPILOGUE  what happens to each row's sum (E_* below)
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
// Six files make the kernel: lm_sums.wgsl (E_DOWN_SPLIT's exact sums), row_dot.wgsl (a row's dot
// product, shared with attention_step.wgsl), gemv_extra.wgsl or gemv_extra_atomic.wgsl (the `extra`
// binding), gemv_early_loads.wgsl (what each invocation reads up front), gemv_prologues.wgsl
// (building x from it) and this one (the constants, bindings, epilogues, main).
//
// Bindings are the same for every variant; a variant that does not use one gets a small dummy buffer.
//   src    the input (P_LOAD, P_LAYERNORM, P_ADALN, P_SILU at src_offset; P_ATTN_MERGE: the partials)
//   aux    P_ADALN: the modulations; E_GATED_RESIDUAL: the gates; E_COND_EOS: the flow head's time
//          embedding
//   dst    the output rows at dst_offset (E_RESIDUAL / E_GATED_RESIDUAL add to them)
//   extra  E_COND_EOS: the end-of-speech logits; P_ATTN_MERGE: the
//          alignment rows; P_NOISE: where the noise is kept for step_end; E_DOWN_SPLIT: the sums
//          (declared in gemv_extra.wgsl, or gemv_extra_atomic.wgsl for E_DOWN_SPLIT)
//
// E_DOWN_SPLIT fuses a feed-forward block into one dispatch: the workgroup's ROWS rows are fc1's
// (LayerNorm prologue, GELU), and instead of storing them it multiplies them by the matching ROWS
// columns of fc2 (segs[1]: DOWN rows) and adds that share of fc2's output to exact sums in `extra`
// (lm_sums.wgsl) at sum_out. The next layer's attention and output projection add the sums
// to the residual they read (attention_step.wgsl's sum_in; E_RESIDUAL with sum_in here). One dispatch a
// layer fewer: on the step's chain a dispatch costs a launch and a memory latency, well above fc2's
// bandwidth, and splitting fc2's K this way needs no new input: each workgroup has its rows of fc1.

const WG_SIZE: u32 = 256u;
const ROWS: u32 = WG_SIZE / LANES;
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
const E_COND_EOS: u32 = 5u;        // segment 0: dst = y + aux[aux_offset + row]; first row of segment 1: eos
const E_DOWN_SPLIT: u32 = 6u;      // fc1 + GELU, then this workgroup's share of fc2 (segs[1]) into sums
const DOWN_TURNS: u32 = (DOWN + WG_SIZE - 1u) / WG_SIZE;  // fc2 rows an invocation (E_DOWN_SPLIT)

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
    dst_offset: u32, normed_offset: u32, write_normed: u32, head_dim: u32,
    heads: u32, part_stride: u32, align: u32, align_head: u32,
    align_stride: u32, aux_offset: u32,
    sum_in: u32,   // E_RESIDUAL: 1 + the word in src of sums to add to the residual (0: none)
    sum_out: u32,  // E_DOWN_SPLIT: the word in extra of the sums (segs start on 16 bytes)
    segs: array<Segment, 8>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;
@group(0) @binding(3) var<storage, read> src: array<f32>;
@group(0) @binding(4) var<storage, read> aux: array<f32>;
@group(0) @binding(5) var<storage, read_write> dst: array<f32>;
// @binding(6) extra: gemv_extra.wgsl or gemv_extra_atomic.wgsl

var<workgroup> xs: array<vec4<f32>, KP / 4u>;  // x, four values an element (row_dot.wgsl)
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

// The word holding a row's bias (0 without one), and the bias from it.
fn bias_word(row: u32) -> u32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    if (seg.has_bias == 0u) { return 0u; }
    return vector_word(seg.bias_kind, seg.bias, where_.y);
}

fn bias_value(row: u32, word: u32) -> f32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    if (seg.has_bias == 0u) { return 0.0; }
    return vector_value(seg.bias_kind, word, where_.y);
}

// ---- the early loads: gemv_early_loads.wgsl; the prologues: gemv_prologues.wgsl ------------------

// ---- the matrix rows: row_dot.wgsl (shared with attention_step.wgsl) ------------------------------
// This lane's share of one row's dot product with xs, loading as it goes (f16 and f32 rows, and q8
// rows too long for the early loads).
fn row_dot(row: u32, lane: u32) -> f32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    return row_dot_loaded(seg.kind, seg.word, seg.scales, seg.padded, where_.y, lane);
}

// ---- epilogues ----------------------------------------------------------------------------------
fn end_of_speech(logit: f32) {
    let frame = state[S_FRAMES];
    extra_set(frame, bitcast<u32>(logit));
    let threshold = bitcast<f32>(state[S_EOS_THRESHOLD]);
    if (state[S_END] == 0u && frame >= state[S_MIN_FRAMES] && logit > threshold) {
        state[S_END] = min(frame + 1u + state[S_FRAMES_AFTER_EOS], state[S_BUDGET]);
        state[S_EOS_FRAME] = frame;
    }
}

fn epilogue(row: u32, value: f32, t: Tail) {
    let v = value + bias_value(row, t.a);
    let out = params.dst_offset + row;
    if (EPILOGUE == E_STORE) {
        dst[out] = v;
    } else if (EPILOGUE == E_GELU) {
        dst[out] = gelu(v);
    } else if (EPILOGUE == E_SILU) {
        dst[out] = silu(v);
    } else if (EPILOGUE == E_RESIDUAL) {
        dst[out] = select(t.b, t.b + sum_value(t.sum), params.sum_in != 0u) + v;
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

// ---- E_DOWN_SPLIT: this workgroup's share of fc2 --------------------------------------------------
// fc1's row r after its bias and GELU (0 past the last row): a unit of the hidden layer
fn hidden_unit(r: u32, total: f32, t: Tail) -> f32 {
    if (r >= params.rows) { return 0.0; }
    return gelu(total + bias_value(r, t.a));
}

// totals[i..i + 4]: four hidden units
fn units4(i: u32) -> vec4<f32> {
    return vec4<f32>(totals[i], totals[min(i + 1u, ROWS - 1u)], totals[min(i + 2u, ROWS - 1u)],
                     totals[min(i + 3u, ROWS - 1u)]);
}

// fc2 row o's ROWS columns from `first` (this workgroup's hidden units) times those units, loading as
// it goes (f16 and f32 rows, and q8 slices other than the early 16; f16 rows have an even length, so a
// pair of words holds four values)
fn down_dot_loaded(o: u32, first: u32) -> f32 {
    let seg = params.segs[1];
    var acc = 0.0;
    for (var r = 0u; r < ROWS; r += 4u) {
        let c = first + r;
        var w: vec4<f32>;
        if (seg.kind == KIND_Q8) {
            w = q8_quad(seg.word, o, seg.padded, c / 4u) * q8_scale(seg.scales, o, seg.padded, c / 32u);
        } else if (seg.kind == KIND_F16) {
            w = h2(seg.word + (o * seg.padded + c) / 2u);
        } else {
            w = w4(seg.word + o * seg.padded + c);
        }
        // columns past the row (the last workgroup's, when fc1's rows are not a multiple of ROWS) read
        // the next row or another tensor: their units are 0, but their words could read as inf or NaN
        let inside = c + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(params.rows);
        acc += dot(select(vec4<f32>(0.0), w, inside), units4(r));
    }
    return acc;
}

fn add_down_shares(group: u32, lid: u32, early: DownShare) {
    let seg = params.segs[1];
    let first = group * ROWS;
    for (var t = 0u; t < DOWN_TURNS; t++) {
        let o = lid + t * WG_SIZE;
        if (o >= DOWN) { break; }
        var v: f32;
        if (early.q8) {
            let s = q8_scale_value(early.scale_words[t], o, seg.padded, first / 32u);
            v = s * q8_dot16(early.w[t], units4(0u), units4(4u), units4(8u), units4(12u));
        } else {
            v = down_dot_loaded(o, first);
        }
        if (group == 0u && seg.has_bias != 0u) {  // fc2's bias, added once
            v += vector_value(seg.bias_kind, vector_word(seg.bias_kind, seg.bias, o), o);
        }
        let share = sum_share(v);
        extra_add(params.sum_out + o, share.x);
        extra_add(params.sum_out + DOWN + o, share.y);
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
    let down = load_down_share(group, ids.lid);
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

    if (EPILOGUE == E_DOWN_SPLIT) {
        if (ids.lid < ROWS) { totals[ids.lid] = hidden_unit(group * ROWS + ids.lid, totals[ids.lid], tail); }
        workgroupBarrier();
        add_down_shares(group, ids.lid, down);
    } else if (ids.lid < ROWS) {
        let r = group * ROWS + ids.lid;
        if (r < params.rows) { epilogue(r, totals[ids.lid], tail); }
    }
}
