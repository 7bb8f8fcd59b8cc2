// One matrix row per 32 lanes: y = W x for a single input vector, the step's workhorse.
//
// Specialisation constants (phonon_web/lm_ops.py):
//   K         input length (the weights' logical columns); KP: K rounded up to 32 (q8 rows are padded)
//   PROLOGUE  how the workgroup builds the input vector x in workgroup memory (P_* below)
//   EPILOGUE  what happens to each row's sum (E_* below)
//   KV_F16    the KV cache holds f16 pairs (pack2x16float) rather than f32 (E_QKV_ROPE only)
//   SPLITS    P_ATTN_MERGE: the attention's splits per head (1 otherwise)
// The workgroup is 256 invocations: 8 rows x 32 lanes. Each lane reads 16 bytes of a row at a time
// (16 q8 values, 8 f16 or 4 f32). Rows come from up to 8 segments (tensors with the same K, each with
// its own kind, offsets and bias), so several matrices that read the same input share one dispatch.
//
// Bindings are the same for every variant; a variant that does not use one gets a small dummy buffer.
//   src    the input (P_LOAD, P_LAYERNORM, P_ADALN, P_SILU at src_offset; P_ATTN_MERGE: the partials)
//   aux    P_ADALN: the modulations; E_GATED_RESIDUAL: the gates; E_QKV_ROPE: the RoPE table;
//          E_COND_EOS: the flow head's time embedding
//   dst    the output rows at dst_offset (E_RESIDUAL / E_GATED_RESIDUAL add to them)
//   extra  E_QKV_ROPE: the KV cache; E_COND_EOS: the end-of-speech logits; P_ATTN_MERGE: the
//          alignment rows; P_NOISE: where the noise is kept for step_end

const WG_SIZE: u32 = 256u;
const ROWS: u32 = 8u;

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

// ---- prologues ----------------------------------------------------------------------------------
fn layer_norm_into_xs(ids: Ids) {
    // One pass: sum and sum of squares together (var = E[x^2] - mean^2, in f32; the residual streams
    // here have |mean| well below their spread, so the cancellation costs ~1e-7 relative).
    var s = vec2<f32>(0.0);
    for (var i = ids.lid; i < KP; i += WG_SIZE) {
        var v = 0.0;
        if (i < K) { v = src[params.src_offset + i]; }
        xs[i] = v;
        s += vec2<f32>(v, v * v);
    }
    let sums = workgroup_sum2(s, ids) / f32(K);
    let mean = sums.x;
    let rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    for (var i = ids.lid; i < K; i += WG_SIZE) {
        var v = (xs[i] - mean) * rstd;
        if (params.ln_affine != 0u) {
            v = v * vector_at(params.ln_kind, params.ln_w, i) + vector_at(params.ln_kind, params.ln_b, i);
        }
        if (PROLOGUE == P_ADALN) {
            v = v * (1.0 + aux[params.mod_scale + i]) + aux[params.mod_shift + i];
        }
        xs[i] = v;
    }
}

// Split-softmax merge (P_ATTN_MERGE): part t = (head, split) left its unnormalised output, its maximum
// score m and its sum l of exp(score - m). Each part's weight is exp(m - M) / L with the head's
// M = max m and L = sum l exp(m - M). The (m, l) pairs go through workgroup memory once, and the
// outputs of a head's SPLITS parts (a constant) are loaded eight side by side: drivers do not unroll
// these loops, and a loop that waits for each load pays a memory latency per split.
var<workgroup> part_max: array<f32, 256>;
var<workgroup> merge_weights: array<f32, 256>;  // (head, split): exp(m_split - m_head) / l_head
var<workgroup> head_stats: array<vec2<f32>, 256>;  // per head: (M, L)

fn attention_merge_into_xs(ids: Ids, first_group: bool) {
    let parts = params.heads * SPLITS;
    var l = 0.0;
    if (ids.lid < parts) {
        let at = ids.lid * params.part_stride + params.head_dim;
        part_max[ids.lid] = src[at];
        l = src[at + 1u];
    }
    workgroupBarrier();
    if (ids.lid < params.heads) {
        var m = -3.0e38;
        for (var s = 0u; s < SPLITS; s++) { m = max(m, part_max[ids.lid * SPLITS + s]); }
        head_stats[ids.lid].x = m;
    }
    workgroupBarrier();
    if (ids.lid < parts) {
        merge_weights[ids.lid] = exp(part_max[ids.lid] - head_stats[ids.lid / SPLITS].x);
        part_max[ids.lid] = l * merge_weights[ids.lid];  // now this part's share of L
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
    for (var i = ids.lid; i < KP; i += WG_SIZE) {
        var v = 0.0;
        if (i < K) {
            let head = i / params.head_dim;
            let d = i % params.head_dim;
            let last = head * SPLITS + SPLITS - 1u;
            for (var s = 0u; s < SPLITS; s += 8u) {
                let t = head * SPLITS + s;
                let v0 = src[min(t + 0u, last) * params.part_stride + d];
                let v1 = src[min(t + 1u, last) * params.part_stride + d];
                let v2 = src[min(t + 2u, last) * params.part_stride + d];
                let v3 = src[min(t + 3u, last) * params.part_stride + d];
                let v4 = src[min(t + 4u, last) * params.part_stride + d];
                let v5 = src[min(t + 5u, last) * params.part_stride + d];
                let v6 = src[min(t + 6u, last) * params.part_stride + d];
                let v7 = src[min(t + 7u, last) * params.part_stride + d];
                v += v0 * merge_weights[t]
                    + select(0.0, v1 * merge_weights[min(t + 1u, last)], s + 1u < SPLITS)
                    + select(0.0, v2 * merge_weights[min(t + 2u, last)], s + 2u < SPLITS)
                    + select(0.0, v3 * merge_weights[min(t + 3u, last)], s + 3u < SPLITS)
                    + select(0.0, v4 * merge_weights[min(t + 4u, last)], s + 4u < SPLITS)
                    + select(0.0, v5 * merge_weights[min(t + 5u, last)], s + 5u < SPLITS)
                    + select(0.0, v6 * merge_weights[min(t + 6u, last)], s + 6u < SPLITS)
                    + select(0.0, v7 * merge_weights[min(t + 7u, last)], s + 7u < SPLITS);
            }
        }
        xs[i] = v;
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

fn prologue(ids: Ids, first_group: bool) {
    if (PROLOGUE == P_LAYERNORM || PROLOGUE == P_ADALN) {
        layer_norm_into_xs(ids);
    } else if (PROLOGUE == P_ATTN_MERGE) {
        attention_merge_into_xs(ids, first_group);
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
    } else {
        for (var i = ids.lid; i < KP; i += WG_SIZE) {
            var v = 0.0;
            if (i < K) {
                v = src[params.src_offset + i];
                if (PROLOGUE == P_SILU) { v = silu(v); }
            }
            xs[i] = v;
        }
    }
    if (params.write_normed != 0u && first_group) {
        for (var i = ids.lid; i < K; i += WG_SIZE) { dst[params.normed_offset + i] = xs[i]; }
    }
}

// ---- the matrix rows ----------------------------------------------------------------------------
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

// This lane's share of one row's dot product with xs.
fn row_dot(row: u32, lane: u32) -> f32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    let local = where_.y;
    var acc = 0.0;
    if (seg.kind == KIND_Q8) {
        let row_base = seg.word + local * (seg.padded / 4u);
        for (var c = lane; c < seg.padded / 16u; c += 32u) {
            let w = row_base + c * 4u;
            let x = c * 16u;
            var part = dot(vec4<f32>(unpack4xI8(weights[w])), xs4(x));
            part += dot(vec4<f32>(unpack4xI8(weights[w + 1u])), xs4(x + 4u));
            part += dot(vec4<f32>(unpack4xI8(weights[w + 2u])), xs4(x + 8u));
            part += dot(vec4<f32>(unpack4xI8(weights[w + 3u])), xs4(x + 12u));
            acc += part * q8_scale(seg.scales, local, seg.padded, c / 2u);
        }
    } else if (seg.kind == KIND_F16) {
        let row_base = seg.word + local * (K / 2u);
        for (var c = lane; c < K / 8u; c += 32u) {
            let w = row_base + c * 4u;
            let x = c * 8u;
            acc += dot(h2(w), xs4(x)) + dot(h2(w + 2u), xs4(x + 4u));
        }
    } else {
        let row_base = seg.word + local * K;
        for (var c = lane; c < K / 4u; c += 32u) {
            acc += dot(w4(row_base + c * 4u), xs4(c * 4u));
        }
    }
    return acc;
}

fn bias_of(row: u32) -> f32 {
    let where_ = segment_of(row);
    let seg = params.segs[where_.x];
    if (seg.has_bias == 0u) { return 0.0; }
    return vector_at(seg.bias_kind, seg.bias, where_.y);
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

// Rows r and r + 1 (an interleaved RoPE pair of q or k, or two values of v).
fn qkv_pair(r: u32, a: f32, b: f32) {
    let hidden = params.heads * params.head_dim;
    let pos = state[S_POS];
    if (r < 2u * hidden) {
        let j = (r % params.head_dim) / 2u;
        let t = (pos * (params.head_dim / 2u) + j) * 2u;
        let c = aux[t];
        let s = aux[t + 1u];
        let x = a * c - b * s;
        let y = b * c + a * s;
        if (r < hidden) {
            dst[params.dst_offset + r] = x;
            dst[params.dst_offset + r + 1u] = y;
        } else {
            kv_write(pos, 0u, r - hidden, vec2<f32>(x, y));
        }
    } else {
        kv_write(pos, 1u, r - 2u * hidden, vec2<f32>(a, b));
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

fn epilogue(row: u32, value: f32) {
    let v = value + bias_of(row);
    let out = params.dst_offset + row;
    if (EPILOGUE == E_STORE) {
        dst[out] = v;
    } else if (EPILOGUE == E_GELU) {
        dst[out] = gelu(v);
    } else if (EPILOGUE == E_SILU) {
        dst[out] = silu(v);
    } else if (EPILOGUE == E_RESIDUAL) {
        dst[out] = dst[out] + v;
    } else if (EPILOGUE == E_GATED_RESIDUAL) {
        dst[out] = dst[out] + aux[params.mod_gate + row] * v;
    } else if (EPILOGUE == E_COND_EOS) {
        let cond_rows = params.segs[0].end;
        if (row < cond_rows) {
            dst[out] = v + aux[params.aux_offset + row];
        } else if (row == cond_rows) {
            end_of_speech(v);
        }
    }
}

@compute @workgroup_size(256)
fn main(ids: Ids) {
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let group = ids.wg.x + ids.wg.y * ids.nwg.x;
    prologue(ids, group == 0u);
    workgroupBarrier();

    let local_row = ids.lid / 32u;
    let lane = ids.lid % 32u;
    let row = group * ROWS + local_row;
    var acc = 0.0;
    if (row < params.rows) { acc = row_dot(row, lane); }
    let total = lanes32_sum(acc, ids);
    if (lane == 0u) { totals[local_row] = total; }
    workgroupBarrier();

    if (EPILOGUE == E_QKV_ROPE) {
        let pair = ids.lid;
        let r = group * ROWS + 2u * pair;
        if (pair < ROWS / 2u && r < params.rows) {
            qkv_pair(r, totals[2u * pair] + bias_of(r), totals[2u * pair + 1u] + bias_of(r + 1u));
        }
    } else if (ids.lid < ROWS) {
        let r = group * ROWS + ids.lid;
        if (r < params.rows) { epilogue(r, totals[ids.lid]); }
    }
}
