// The end of a step, in one workgroup: the flow head's final layer (adaLN without affine, then the
// projection to the latent), z = noise + velocity (one LSD step from t = 0 to 1), the denormalised
// latent for the codec, the next input row input_linear(z) + condition, and the state advance.
// It is the step's last kernel: once it has run, the next step sees frames + 1.
//
// Its input is the flow head's residual stream as the last residual block left it: base (src_offset)
// + gate * (fc2 bias + that block's PARTS partial outputs at parts_offset), as in mlp_slice.wgsl.
//
// Constants: F (flow width), LATENT, HIDDEN, PARTS.

const WG_SIZE: u32 = 256u;
const SHARES: u32 = WG_SIZE / LATENT;  // invocations per latent channel in the projection
const F_TURNS: u32 = (F + WG_SIZE - 1u) / WG_SIZE;

struct Params {
    gate: u32, eps: f32, mod_shift: u32, mod_scale: u32,
    lin_kind: u32, lin_word: u32, lin_scales: u32, lin_padded: u32,
    lin_bias_kind: u32, lin_bias: u32, mean_kind: u32, mean_word: u32,
    std_kind: u32, std_word: u32, in_kind: u32, in_word: u32,
    in_scales: u32, in_padded: u32, src_offset: u32, parts_offset: u32,
    mod_gate: u32, bias2_kind: u32, bias2: u32, has_bias2: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;
@group(0) @binding(3) var<storage, read> flow_x: array<f32>;      // the flow head's residual stream + partials
@group(0) @binding(4) var<storage, read> mods: array<f32>;        // adaLN modulations
@group(0) @binding(5) var<storage, read> cond: array<f32>;        // the condition vector
@group(0) @binding(6) var<storage, read_write> flow_io: array<f32>;  // [noise (LATENT), z (LATENT)]
@group(0) @binding(7) var<storage, read_write> latents: array<f32>;  // [frame][LATENT], denormalised
@group(0) @binding(8) var<storage, read_write> x: array<f32>;        // the backbone's next input row

var<workgroup> xs: array<f32, F>;

// Values k..k+3 of row `row` of a matrix of any kind (k a multiple of 4).
fn weights4(kind: u32, word: u32, scales: u32, cols: u32, padded: u32, row: u32, k: u32) -> vec4<f32> {
    if (kind == KIND_Q8) {
        let w = weights[word + row * (padded / 4u) + k / 4u];
        return vec4<f32>(unpack4xI8(w)) * q8_scale(scales, row, padded, k / 32u);
    }
    if (kind == KIND_F16) {
        let i = word + (row * cols + k) / 2u;
        return vec4<f32>(unpack2x16float(weights[i]), unpack2x16float(weights[i + 1u]));
    }
    let i = word + row * cols + k;
    return vec4<f32>(bitcast<f32>(weights[i]), bitcast<f32>(weights[i + 1u]),
                     bitcast<f32>(weights[i + 2u]), bitcast<f32>(weights[i + 3u]));
}
var<workgroup> parts: array<f32, WG_SIZE>;
var<workgroup> zs: array<f32, LATENT>;

// The last block's output still owed at one element: PARTS partials F apart from `at`, eight loads a
// turn, written out (see gemv.wgsl's owed_in_src).
fn owed(at: u32) -> f32 {
    let last = max(PARTS, 1u) - 1u;
    var total = 0.0;
    for (var p = 0u; p < PARTS; p += 8u) {
        let v0 = flow_x[at + p * F];
        let v1 = flow_x[at + min(p + 1u, last) * F];
        let v2 = flow_x[at + min(p + 2u, last) * F];
        let v3 = flow_x[at + min(p + 3u, last) * F];
        let v4 = flow_x[at + min(p + 4u, last) * F];
        let v5 = flow_x[at + min(p + 5u, last) * F];
        let v6 = flow_x[at + min(p + 6u, last) * F];
        let v7 = flow_x[at + min(p + 7u, last) * F];
        total += v0 + select(0.0, v1, p + 1u < PARTS) + select(0.0, v2, p + 2u < PARTS)
            + select(0.0, v3, p + 3u < PARTS) + select(0.0, v4, p + 4u < PARTS)
            + select(0.0, v5, p + 5u < PARTS) + select(0.0, v6, p + 6u < PARTS)
            + select(0.0, v7, p + 7u < PARTS);
    }
    return total;
}

@compute @workgroup_size(256)
fn main(ids: Ids) {
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let frame = state[S_FRAMES];

    // the residual stream (its last block's partials summed here), then adaLN (LayerNorm without
    // affine, then shift and scale)
    var s = 0.0;
    for (var turn = 0u; turn < F_TURNS; turn++) {
        let i = ids.lid + turn * WG_SIZE;
        if (i < F) {
            var y = 0.0;
            if (params.has_bias2 != 0u) { y = vector_at(params.bias2_kind, params.bias2, i); }
            if (PARTS > 0u) { y += owed(params.parts_offset + i); }
            var v = flow_x[params.src_offset + i];
            if (PARTS > 0u) { v += mods[params.mod_gate + i] * y; }
            xs[i] = v;
            s += v;
        }
    }
    let mean = workgroup_sum(s, ids) / f32(F);
    var sq = 0.0;
    for (var turn = 0u; turn < F_TURNS; turn++) {
        let i = ids.lid + turn * WG_SIZE;
        if (i < F) { let d = xs[i] - mean; sq += d * d; }
    }
    let rstd = 1.0 / sqrt(workgroup_sum(sq, ids) / f32(F) + params.eps);
    for (var turn = 0u; turn < F_TURNS; turn++) {
        let i = ids.lid + turn * WG_SIZE;
        if (i < F) {
            xs[i] = (xs[i] - mean) * rstd * (1.0 + mods[params.mod_scale + i]) + mods[params.mod_shift + i];
        }
    }
    workgroupBarrier();

    // the velocity: SHARES invocations per channel, each a contiguous slice of the F columns
    let channel = ids.lid / SHARES;
    let span = F / SHARES;
    var acc = 0.0;
    for (var j = 0u; j < span; j += 16u) {  // four loads a turn, written out (see owed)
        let k = (ids.lid % SHARES) * span + j;
        let end = (ids.lid % SHARES) * span + span - 4u;
        let k1 = min(k + 4u, end);
        let k2 = min(k + 8u, end);
        let k3 = min(k + 12u, end);
        let w0 = weights4(params.lin_kind, params.lin_word, params.lin_scales, F, params.lin_padded, channel, k);
        let w1 = weights4(params.lin_kind, params.lin_word, params.lin_scales, F, params.lin_padded, channel, k1);
        let w2 = weights4(params.lin_kind, params.lin_word, params.lin_scales, F, params.lin_padded, channel, k2);
        let w3 = weights4(params.lin_kind, params.lin_word, params.lin_scales, F, params.lin_padded, channel, k3);
        acc += dot(w0, vec4<f32>(xs[k], xs[k + 1u], xs[k + 2u], xs[k + 3u]));
        acc += select(0.0, dot(w1, vec4<f32>(xs[k1], xs[k1 + 1u], xs[k1 + 2u], xs[k1 + 3u])), j + 4u < span);
        acc += select(0.0, dot(w2, vec4<f32>(xs[k2], xs[k2 + 1u], xs[k2 + 2u], xs[k2 + 3u])), j + 8u < span);
        acc += select(0.0, dot(w3, vec4<f32>(xs[k3], xs[k3 + 1u], xs[k3 + 2u], xs[k3 + 3u])), j + 12u < span);
    }
    parts[ids.lid] = acc;
    workgroupBarrier();
    if (ids.lid < LATENT) {
        var v = 0.0;
        for (var p = 0u; p < SHARES; p++) { v += parts[ids.lid * SHARES + p]; }
        v += vector_at(params.lin_bias_kind, params.lin_bias, ids.lid);
        let z = flow_io[ids.lid] + v;
        zs[ids.lid] = z;
        flow_io[LATENT + ids.lid] = z;
        let std_ = vector_at(params.std_kind, params.std_word, ids.lid);
        let mean_ = vector_at(params.mean_kind, params.mean_word, ids.lid);
        latents[frame * LATENT + ids.lid] = z * std_ + mean_;
    }
    workgroupBarrier();

    // the next row the backbone reads: input_linear(z) + condition
    for (var r = ids.lid; r < HIDDEN; r += WG_SIZE) {
        var v = 0.0;
        for (var j = 0u; j < LATENT; j += 4u) {
            let w = weights4(params.in_kind, params.in_word, params.in_scales, LATENT, params.in_padded, r, j);
            v += dot(w, vec4<f32>(zs[j], zs[j + 1u], zs[j + 2u], zs[j + 3u]));
        }
        x[r] = v + cond[r];
    }
    workgroupBarrier();
    if (ids.lid == 0u) {
        let made = frame + 1u;
        state[S_FRAMES] = made;
        state[S_POS] = state[S_POS] + 1u;
        if (state[S_END] == 0u && made >= state[S_BUDGET]) { state[S_END] = state[S_BUDGET]; }
    }
}
