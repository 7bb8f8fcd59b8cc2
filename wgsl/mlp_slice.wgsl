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
                var y = bias(params.bias2, i);
                for (var p = 0u; p < PARTS_IN; p++) { y += resid[params.in_parts + p * N + i]; }
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
            for (var j = 0u; j < SPAN; j += 4u) {  // a constant count: unrolled, loads together
                let k = lane * SPAN + j;
                acc += dot(row4(W1_KIND, params.fc1, K, row, k), xs4(k));
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
            for (var c = 0u; c < SLICE; c += 4u) {
                acc += dot(row4(W2_KIND, params.fc2, hidden, n, group * SLICE + c), hs4(c));
            }
            resid[params.out_parts + group * N + n] = acc;
        }
    }
}
