// One workgroup's share of an MLP block, y = fc2(act(fc1(norm(x)))), in one dispatch instead of two.
// Workgroup g takes the hidden units [g * SLICE, (g + 1) * SLICE): it makes them all (fc1 rows), then
// leaves fc2's product over just those units, N values, as partial g in `resid`. Nobody sums the
// partials here: the next kernel to read the block's output adds the G partials (and fc2's bias, and
// in the flow head the adaLN gate) while it loads its own input, so the MLP costs one dependent
// dispatch, not two (gemv.wgsl's PARTS, step_end.wgsl, and this kernel's own input below).
//
// The input, element i:  x = resid[src_offset + i]
//                          + gate_i * (bias2_i + sum over p < PARTS_IN of resid[in_parts + p * N + i])
// (gate_i = mods[mod_gate + i] when in_gated, else 1): the previous block's output, still in partials.
// With write_x, the first workgroup stores x at x_offset, the base of the next block's input.
// Then LayerNorm (affine if ln_affine), and with NORM 1 (adaLN) the mods' shift and scale.
//
// Constants: K (x's width), SLICE (hidden units per workgroup, a multiple of 4), N (fc2's rows),
// PARTS_IN, NORM, ACT (0 exact GELU, 1 SiLU), W1_KIND and W2_KIND (fc1's and fc2's kinds: weights.wgsl's
// KIND_*; q8 rows padded to 32).

const WG_SIZE: u32 = 256u;
const LANES: u32 = 8u;                          // invocations per fc1 row, each K / LANES columns
const FC1_ROWS: u32 = WG_SIZE / LANES;          // fc1 rows per turn
const FC1_TURNS: u32 = (SLICE + FC1_ROWS - 1u) / FC1_ROWS;
const XS_TURNS: u32 = (K + WG_SIZE - 1u) / WG_SIZE;
const OUT_TURNS: u32 = (N + WG_SIZE - 1u) / WG_SIZE;
const SPAN: u32 = K / LANES;                     // fc1 columns per invocation (lm_ops: a multiple of 4)

struct Matrix { kind: u32, word: u32, scales: u32, padded: u32 }
struct Vector { word: u32, kind: u32, present: u32, _pad: u32 }

struct Params {
    gate: u32, src_offset: u32, in_parts: u32, in_gated: u32,
    mod_gate: u32, write_x: u32, x_offset: u32, out_parts: u32,
    ln_w: u32, ln_b: u32, ln_kind: u32, ln_affine: u32,
    ln_eps: f32, mod_shift: u32, mod_scale: u32, _pad0: u32,
    fc1: Matrix, fc2: Matrix,
    bias1: Vector, bias2: Vector,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> resid: array<f32>;  // bases, x and the partials
@group(0) @binding(4) var<storage, read> mods: array<f32>;          // adaLN modulations (NORM 1, in_gated)

var<workgroup> xs: array<f32, K>;
var<workgroup> dots: array<f32, FC1_TURNS * WG_SIZE>;
var<workgroup> hs: array<f32, SLICE>;

// Values k..k+3 of a matrix row (k a multiple of 4; q8 blocks of 32 never straddle them). The kind is
// a constant (W1_KIND / W2_KIND), so the branch folds away and unrolled loops issue their loads together.
fn row4(kind: u32, m: Matrix, cols: u32, row: u32, k: u32) -> vec4<f32> {
    if (kind == KIND_Q8) {
        let w = weights[m.word + row * (m.padded / 4u) + k / 4u];
        return vec4<f32>(unpack4xI8(w)) * q8_scale(m.scales, row, m.padded, k / 32u);
    }
    if (kind == KIND_F16) {
        let i = m.word + (row * cols + k) / 2u;
        return vec4<f32>(unpack2x16float(weights[i]), unpack2x16float(weights[i + 1u]));
    }
    let i = m.word + row * cols + k;
    return vec4<f32>(bitcast<f32>(weights[i]), bitcast<f32>(weights[i + 1u]),
                     bitcast<f32>(weights[i + 2u]), bitcast<f32>(weights[i + 3u]));
}

fn bias(v: Vector, i: u32) -> f32 {
    if (v.present == 0u) { return 0.0; }
    return vector_at(v.kind, v.word, i);
}

fn xs4(i: u32) -> vec4<f32> {
    return vec4<f32>(xs[i], xs[i + 1u], xs[i + 2u], xs[i + 3u]);
}

fn hs4(i: u32) -> vec4<f32> {
    return vec4<f32>(hs[i], hs[i + 1u], hs[i + 2u], hs[i + 3u]);
}

// The previous block's output still owed at one element: PARTS_IN partials N apart from `at`, eight
// loads a turn, written out (see gemv.wgsl's owed_in_src).
fn owed(at: u32) -> f32 {
    var total = 0.0;
    for (var p = 0u; p < PARTS_IN; p += 8u) {
        let v0 = resid[at + p * N];
        let v1 = resid[at + min(p + 1u, max(PARTS_IN, 1u) - 1u) * N];
        let v2 = resid[at + min(p + 2u, max(PARTS_IN, 1u) - 1u) * N];
        let v3 = resid[at + min(p + 3u, max(PARTS_IN, 1u) - 1u) * N];
        let v4 = resid[at + min(p + 4u, max(PARTS_IN, 1u) - 1u) * N];
        let v5 = resid[at + min(p + 5u, max(PARTS_IN, 1u) - 1u) * N];
        let v6 = resid[at + min(p + 6u, max(PARTS_IN, 1u) - 1u) * N];
        let v7 = resid[at + min(p + 7u, max(PARTS_IN, 1u) - 1u) * N];
        total += v0 + select(0.0, v1, p + 1u < PARTS_IN) + select(0.0, v2, p + 2u < PARTS_IN)
            + select(0.0, v3, p + 3u < PARTS_IN) + select(0.0, v4, p + 4u < PARTS_IN)
            + select(0.0, v5, p + 5u < PARTS_IN) + select(0.0, v6, p + 6u < PARTS_IN)
            + select(0.0, v7, p + 7u < PARTS_IN);
    }
    return total;
}

@compute @workgroup_size(256)
fn main(ids: Ids) {
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let group = ids.wg.x;

    // the input: base + the previous block's partials, then its norm
    var s = vec2<f32>(0.0);
    for (var turn = 0u; turn < XS_TURNS; turn++) {
        let i = ids.lid + turn * WG_SIZE;
        if (i < K) {
            var v = resid[params.src_offset + i];
            if (PARTS_IN > 0u) {
                var y = bias(params.bias2, i) + owed(params.in_parts + i);
                if (params.in_gated != 0u) { y *= mods[params.mod_gate + i]; }
                v += y;
            }
            if (params.write_x != 0u && group == 0u) { resid[params.x_offset + i] = v; }
            xs[i] = v;
            s += vec2<f32>(v, v * v);
        }
    }
    let sums = workgroup_sum2(s, ids) / f32(K);
    let mean = sums.x;
    let rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    for (var turn = 0u; turn < XS_TURNS; turn++) {
        let i = ids.lid + turn * WG_SIZE;
        if (i < K) {
            var v = (xs[i] - mean) * rstd;
            if (params.ln_affine != 0u) {
                v = v * vector_at(params.ln_kind, params.ln_w, i) + vector_at(params.ln_kind, params.ln_b, i);
            }
            if (NORM == 1u) {
                v = v * (1.0 + mods[params.mod_scale + i]) + mods[params.mod_shift + i];
            }
            xs[i] = v;
        }
    }
    workgroupBarrier();

    // fc1: LANES invocations per row, each a contiguous SPAN of the columns; sums through `dots`
    let lane = ids.lid % LANES;
    for (var turn = 0u; turn < FC1_TURNS; turn++) {
        let local = turn * FC1_ROWS + ids.lid / LANES;
        var acc = 0.0;
        if (local < SLICE) {
            let row = group * SLICE + local;
            // four loads a turn, written out (drivers do not unroll this loop, and each turn
            // waits for its loads); past SPAN they read the span's last quad with weight 0
            for (var j = 0u; j < SPAN; j += 16u) {
                let k = lane * SPAN + j;
                let end = lane * SPAN + SPAN - 4u;
                let w0 = row4(W1_KIND, params.fc1, K, row, k);
                let w1 = row4(W1_KIND, params.fc1, K, row, min(k + 4u, end));
                let w2 = row4(W1_KIND, params.fc1, K, row, min(k + 8u, end));
                let w3 = row4(W1_KIND, params.fc1, K, row, min(k + 12u, end));
                acc += dot(w0, xs4(k));
                acc += select(0.0, dot(w1, xs4(min(k + 4u, end))), j + 4u < SPAN);
                acc += select(0.0, dot(w2, xs4(min(k + 8u, end))), j + 8u < SPAN);
                acc += select(0.0, dot(w3, xs4(min(k + 12u, end))), j + 12u < SPAN);
            }
        }
        dots[turn * WG_SIZE + ids.lid] = acc;
    }
    workgroupBarrier();
    if (ids.lid < SLICE) {
        var h = bias(params.bias1, group * SLICE + ids.lid);
        for (var l = 0u; l < LANES; l++) { h += dots[ids.lid * LANES + l]; }
        if (ACT == 0u) { h = gelu(h); } else { h = silu(h); }
        hs[ids.lid] = h;
    }
    workgroupBarrier();

    // fc2 over this slice's columns: one invocation per output row
    let hidden = SLICE * ids.nwg.x;
    for (var turn = 0u; turn < OUT_TURNS; turn++) {
        let n = ids.lid + turn * WG_SIZE;
        if (n < N) {
            var acc = 0.0;
            let first = group * SLICE;
            for (var c = 0u; c < SLICE; c += 32u) {  // eight loads a turn, written out as in fc1
                let last = SLICE - 4u;
                let w0 = row4(W2_KIND, params.fc2, hidden, n, first + c);
                let w1 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 4u, last));
                let w2 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 8u, last));
                let w3 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 12u, last));
                let w4 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 16u, last));
                let w5 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 20u, last));
                let w6 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 24u, last));
                let w7 = row4(W2_KIND, params.fc2, hidden, n, first + min(c + 28u, last));
                acc += dot(w0, hs4(c));
                acc += select(0.0, dot(w1, hs4(min(c + 4u, last))), c + 4u < SLICE);
                acc += select(0.0, dot(w2, hs4(min(c + 8u, last))), c + 8u < SLICE);
                acc += select(0.0, dot(w3, hs4(min(c + 12u, last))), c + 12u < SLICE);
                acc += select(0.0, dot(w4, hs4(min(c + 16u, last))), c + 16u < SLICE);
                acc += select(0.0, dot(w5, hs4(min(c + 20u, last))), c + 20u < SLICE);
                acc += select(0.0, dot(w6, hs4(min(c + 24u, last))), c + 24u < SLICE);
                acc += select(0.0, dot(w7, hs4(min(c + 28u, last))), c + 28u < SLICE);
            }
            resid[params.out_parts + group * N + n] = acc;
        }
    }
}
