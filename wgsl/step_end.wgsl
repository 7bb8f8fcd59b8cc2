// The end of a step, in one workgroup: the flow head's final layer (adaLN without affine, then the
// projection to the latent), z = noise + velocity (one LSD step from t = 0 to 1), the denormalised
// latent for the codec, the next input row input_linear(z) + condition, and the state advance.
// It is the step's last kernel: once it has run, the next step sees frames + 1.
//
// Constants: F (flow width), LATENT, HIDDEN.

const WG_SIZE: u32 = 256u;
const PARTS: u32 = WG_SIZE / LATENT;  // invocations per latent channel in the projection

struct Params {
    gate: u32, eps: f32, mod_shift: u32, mod_scale: u32,
    lin_kind: u32, lin_word: u32, lin_scales: u32, lin_padded: u32,
    lin_bias_kind: u32, lin_bias: u32, mean_kind: u32, mean_word: u32,
    std_kind: u32, std_word: u32, in_kind: u32, in_word: u32,
    in_scales: u32, in_padded: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;
@group(0) @binding(3) var<storage, read> flow_x: array<f32>;      // the flow head's residual stream
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

@compute @workgroup_size(256)
fn main(ids: Ids) {
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let frame = state[S_FRAMES];

    // adaLN of the flow residual (LayerNorm without affine, then shift and scale)
    var s = 0.0;
    for (var i = ids.lid; i < F; i += WG_SIZE) { xs[i] = flow_x[i]; s += xs[i]; }
    let mean = workgroup_sum(s, ids) / f32(F);
    var sq = 0.0;
    for (var i = ids.lid; i < F; i += WG_SIZE) { let d = xs[i] - mean; sq += d * d; }
    let rstd = 1.0 / sqrt(workgroup_sum(sq, ids) / f32(F) + params.eps);
    for (var i = ids.lid; i < F; i += WG_SIZE) {
        xs[i] = (xs[i] - mean) * rstd * (1.0 + mods[params.mod_scale + i]) + mods[params.mod_shift + i];
    }
    workgroupBarrier();

    // the velocity: PARTS invocations per channel, each a contiguous slice of the F columns
    let channel = ids.lid / PARTS;
    let span = F / PARTS;
    var acc = 0.0;
    for (var k = (ids.lid % PARTS) * span; k < (ids.lid % PARTS + 1u) * span; k += 4u) {
        let w = weights4(params.lin_kind, params.lin_word, params.lin_scales, F, params.lin_padded, channel, k);
        acc += dot(w, vec4<f32>(xs[k], xs[k + 1u], xs[k + 2u], xs[k + 3u]));
    }
    parts[ids.lid] = acc;
    workgroupBarrier();
    if (ids.lid < LATENT) {
        var v = 0.0;
        for (var p = 0u; p < PARTS; p++) { v += parts[ids.lid * PARTS + p]; }
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
