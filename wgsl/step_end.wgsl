// The end of a step, in one workgroup: the flow head's final layer (adaLN without affine, then the
// projection to the latent), z = noise + velocity (one LSD step from t = 0 to 1), the denormalised
// latent for the codec, the next input row input_linear(z) + condition, the next frame's noise and
// the flow head's next input input_proj(noise) + bias (no step of its own: the noise depends only on
// the seed and the frame; the take's start makes frame 0's), and the state advance.
// It is the step's last kernel: once it has run, the next step sees frames + 1.
//
// As in gemv.wgsl, every load that waits on nothing this kernel computes is issued first (the
// residual and its modulation, this invocation's share of the weights, the biases, the condition),
// and the noise's arithmetic overlaps their latency; only then does the workgroup wait.
//
// Constants: F (flow width), LATENT, HIDDEN; F and HIDDEN at most 512 (two elements an invocation).

const WG_SIZE: u32 = 256u;
const PARTS: u32 = WG_SIZE / LATENT;  // invocations per latent channel in the projection
const SPAN: u32 = F / PARTS;          // columns of the projection per invocation (64 at the real sizes)
const EARLY_SPAN: bool = SPAN % 16u == 0u && SPAN <= 64u;  // a q8 span loaded up front
const EARLY_ROWS: bool = LATENT == 32u;                      // q8 rows of 32 loaded up front

struct Params {
    gate: u32, eps: f32, mod_shift: u32, mod_scale: u32,
    lin_kind: u32, lin_word: u32, lin_scales: u32, lin_padded: u32,
    lin_bias_kind: u32, lin_bias: u32, mean_kind: u32, mean_word: u32,
    std_kind: u32, std_word: u32, in_kind: u32, in_word: u32,
    in_scales: u32, in_padded: u32, proj_kind: u32, proj_word: u32,
    proj_scales: u32, proj_padded: u32, proj_bias_kind: u32, proj_bias: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> flow_x: array<f32>;  // the flow head's residual stream
@group(0) @binding(4) var<storage, read> mods: array<f32>;        // adaLN modulations
@group(0) @binding(5) var<storage, read> cond: array<f32>;        // the condition vector
@group(0) @binding(6) var<storage, read_write> flow_io: array<f32>;  // [noise (LATENT), z (LATENT)]
@group(0) @binding(7) var<storage, read_write> latents: array<f32>;  // [frame][LATENT], denormalised
@group(0) @binding(8) var<storage, read_write> x: array<f32>;        // the backbone's next input row

var<workgroup> xs: array<vec4<f32>, F / 4u>;  // four values an element, as in row_dot.wgsl
// Workgroup arrays hold vec4s so that one clamped 16-byte read fetches four values (see row_dot.wgsl):
// PARTS and LATENT are multiples of 4 (LATENT is 32; lm_ops.py refuses others).
var<workgroup> parts: array<vec4<f32>, WG_SIZE / 4u>;  // the projection's partial sums, PARTS a channel
var<workgroup> zn: array<vec4<f32>, LATENT / 2u>;      // [z, the next frame's noise], LATENT each

// Values k..k+3 of row `row` of a matrix of any kind (k a multiple of 4): the late path.
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

fn xs4(k: u32) -> vec4<f32> {  // k a multiple of 4
    return xs[k / 4u];
}

fn zn4(j: u32) -> vec4<f32> {  // j a multiple of 4
    return zn[j / 4u];
}

fn q8_dot_xs(w: vec4<u32>, k: u32) -> f32 {
    return q8_dot16(w, xs4(k), xs4(k + 4u), xs4(k + 8u), xs4(k + 12u));
}

fn q8_dot_zn(w: vec4<u32>, j: u32) -> f32 {
    return q8_dot16(w, zn4(j), zn4(j + 4u), zn4(j + 8u), zn4(j + 12u));
}

// ---- the early loads ----------------------------------------------------------------------------
// Loads are kept as raw words and turned into numbers where they are used: arithmetic on a loaded
// value (a scale's unpacking, a mask) waits for the load, and so would every load issued after it.

// Element i of the flow residual with its modulation, as loaded (past F: element F - 1, never used).
struct FlowElem { x: f32, scale: f32, shift: f32 }

fn flow_elem(i: u32) -> FlowElem {
    let j = min(i, F - 1u);
    return FlowElem(flow_x[j], mods[params.mod_scale + j], mods[params.mod_shift + j]);
}

// This invocation's SPAN q8 values of the projection's row `row` from column `first`, in chunks of 16.
struct Span { w0: vec4<u32>, w1: vec4<u32>, w2: vec4<u32>, w3: vec4<u32>, s: vec4<u32>, row: u32 }

fn load_span(row: u32, first: u32) -> Span {
    var r: Span;
    if (!EARLY_SPAN || params.lin_kind != KIND_Q8) { return r; }
    let base = params.lin_word + row * (params.lin_padded / 4u) + first / 4u;
    r.row = row;
    r.w0 = weight_words4(base);
    r.s.x = q8_scale_word(params.lin_scales, row, params.lin_padded, first / 32u);
    if (SPAN > 16u) {
        r.w1 = weight_words4(base + 4u);
        r.s.y = q8_scale_word(params.lin_scales, row, params.lin_padded, (first + 16u) / 32u);
    }
    if (SPAN > 32u) {
        r.w2 = weight_words4(base + 8u);
        r.s.z = q8_scale_word(params.lin_scales, row, params.lin_padded, (first + 32u) / 32u);
    }
    if (SPAN > 48u) {
        r.w3 = weight_words4(base + 12u);
        r.s.w = q8_scale_word(params.lin_scales, row, params.lin_padded, (first + 48u) / 32u);
    }
    return r;
}

fn span_scale(r: Span, word: u32, k: u32) -> f32 {
    return q8_scale_value(word, r.row, params.lin_padded, k / 32u);
}

fn span_dot(r: Span, first: u32) -> f32 {
    var acc = span_scale(r, r.s.x, first) * q8_dot_xs(r.w0, first);
    if (SPAN > 16u) { acc += span_scale(r, r.s.y, first + 16u) * q8_dot_xs(r.w1, first + 16u); }
    if (SPAN > 32u) { acc += span_scale(r, r.s.z, first + 32u) * q8_dot_xs(r.w2, first + 32u); }
    if (SPAN > 48u) { acc += span_scale(r, r.s.w, first + 48u) * q8_dot_xs(r.w3, first + 48u); }
    return acc;
}

// A q8 row of LATENT = 32 values (input_linear, input_proj): two chunks of 16 and the word of the
// row's scale (not loaded when the row does not exist or is read late).
struct Row32 { a: vec4<u32>, b: vec4<u32>, s: u32 }

fn load_row32(kind: u32, word: u32, scales: u32, padded: u32, row: u32, rows: u32) -> Row32 {
    var r: Row32;
    if (!EARLY_ROWS || kind != KIND_Q8 || row >= rows) { return r; }
    let base = word + row * (padded / 4u);
    r.a = weight_words4(base);
    r.b = weight_words4(base + 4u);
    r.s = q8_scale_word(scales, row, padded, 0u);
    return r;
}

// Row `row` of a LATENT-wide matrix times zn[at..at + LATENT]: early (q8) or loaded here.
fn latent_row_dot(r: Row32, kind: u32, word: u32, scales: u32, padded: u32, row: u32, at: u32) -> f32 {
    if (EARLY_ROWS && kind == KIND_Q8) {
        return q8_scale_value(r.s, row, padded, 0u) * (q8_dot_zn(r.a, at) + q8_dot_zn(r.b, at + 16u));
    }
    var v = 0.0;
    for (var j = 0u; j < LATENT; j += 4u) {
        v += dot(weights4(kind, word, scales, LATENT, padded, row, j), zn4(at + j));
    }
    return v;
}

@compute @workgroup_size(256)
fn main(ids: Ids) {
    let lid = ids.lid;
    let frame = state[S_FRAMES];
    let seed = state[S_SEED];
    let noise_scale = bitcast<f32>(state[S_NOISE_SCALE]);
    let f0 = flow_elem(lid);
    let f1 = flow_elem(lid + WG_SIZE);
    let channel = lid / PARTS;
    let first = (lid % PARTS) * SPAN;
    let span = load_span(channel, first);
    // lid < LATENT: this frame's noise, and the words of the projection's bias, std and mean
    var noise = 0.0;
    var head = vec3<u32>(0u);
    if (lid < LATENT) {
        noise = flow_io[lid];
        head = vec3<u32>(vector_word(params.lin_bias_kind, params.lin_bias, lid),
                         vector_word(params.std_kind, params.std_word, lid),
                         vector_word(params.mean_kind, params.mean_word, lid));
    }
    let r1 = lid + WG_SIZE;
    let in0 = load_row32(params.in_kind, params.in_word, params.in_scales, params.in_padded, lid, HIDDEN);
    let in1 = load_row32(params.in_kind, params.in_word, params.in_scales, params.in_padded, r1, HIDDEN);
    let pr0 = load_row32(params.proj_kind, params.proj_word, params.proj_scales, params.proj_padded, lid, F);
    let pr1 = load_row32(params.proj_kind, params.proj_word, params.proj_scales, params.proj_padded, r1, F);
    let cond0 = cond[min(lid, HIDDEN - 1u)];
    let cond1 = cond[min(r1, HIDDEN - 1u)];
    let bias0 = vector_word(params.proj_bias_kind, params.proj_bias, min(lid, F - 1u));
    let bias1 = vector_word(params.proj_bias_kind, params.proj_bias, min(r1, F - 1u));
    var next_noise = 0.0;  // arithmetic only, while the loads above are on their way
    if (lid < LATENT) { next_noise = noise_value(seed, frame + 1u, lid) * noise_scale; }
    if (skip_workgroup(params.gate, lid)) { return; }

    // adaLN of the flow residual: LayerNorm without affine (sum and sum of squares in one pass, as
    // gemv's prologue), then scale and shift
    let x0 = select(0.0, f0.x, lid < F);
    let x1 = select(0.0, f1.x, r1 < F);
    let sums = workgroup_sum2(vec2<f32>(x0 + x1, x0 * x0 + x1 * x1), ids) / f32(F);
    let mean = sums.x;
    let rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.eps);
    if (lid < F) { xs[lid / 4u][lid % 4u] = (f0.x - mean) * rstd * (1.0 + f0.scale) + f0.shift; }
    if (r1 < F) { xs[r1 / 4u][r1 % 4u] = (f1.x - mean) * rstd * (1.0 + f1.scale) + f1.shift; }
    workgroupBarrier();

    // the velocity: PARTS invocations per channel, each a contiguous slice of SPAN columns
    var acc = 0.0;
    if (EARLY_SPAN && params.lin_kind == KIND_Q8) {
        acc = span_dot(span, first);
    } else {
        for (var k = first; k < first + SPAN; k += 4u) {
            let w = weights4(params.lin_kind, params.lin_word, params.lin_scales, F, params.lin_padded, channel, k);
            acc += dot(w, xs4(k));
        }
    }
    parts[lid / 4u][lid % 4u] = acc;
    workgroupBarrier();
    if (lid < LATENT) {
        var v = vector_value(params.lin_bias_kind, head.x, lid);
        for (var p = 0u; p < PARTS / 4u; p++) { v += dot(parts[lid * (PARTS / 4u) + p], vec4<f32>(1.0)); }
        let z = noise + v;
        zn[lid / 4u][lid % 4u] = z;
        zn[(LATENT + lid) / 4u][lid % 4u] = next_noise;
        flow_io[lid] = next_noise;
        flow_io[LATENT + lid] = z;
        latents[frame * LATENT + lid] = z * vector_value(params.std_kind, head.y, lid)
            + vector_value(params.mean_kind, head.z, lid);
    }
    workgroupBarrier();

    // the backbone's next input row, input_linear(z) + condition, and the flow head's next input,
    // input_proj(next noise) + bias
    let pm = params;
    if (lid < HIDDEN) { x[lid] = latent_row_dot(in0, pm.in_kind, pm.in_word, pm.in_scales, pm.in_padded, lid, 0u) + cond0; }
    if (r1 < HIDDEN) { x[r1] = latent_row_dot(in1, pm.in_kind, pm.in_word, pm.in_scales, pm.in_padded, r1, 0u) + cond1; }
    if (lid < F) {
        flow_x[lid] = latent_row_dot(pr0, pm.proj_kind, pm.proj_word, pm.proj_scales, pm.proj_padded, lid, LATENT)
            + vector_value(pm.proj_bias_kind, bias0, min(lid, F - 1u));
    }
    if (r1 < F) {
        flow_x[r1] = latent_row_dot(pr1, pm.proj_kind, pm.proj_word, pm.proj_scales, pm.proj_padded, r1, LATENT)
            + vector_value(pm.proj_bias_kind, bias1, min(r1, F - 1u));
    }
    workgroupBarrier();
    if (lid == 0u) {
        let made = frame + 1u;
        state[S_FRAMES] = made;
        state[S_POS] = state[S_POS] + 1u;
        if (state[S_END] == 0u && made >= state[S_BUDGET]) { state[S_END] = state[S_BUDGET]; }
    }
}
