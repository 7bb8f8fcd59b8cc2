// The flow head's time embedding (run once, at load): the head does one LSD step from t = 0 to 1,
// so its time conditioning is the constant mean of embedding 0 at t = 0 and embedding 1 at t = 1.
// One dispatch per embedding; each adds its vector into `out` and the last divides by the count.
//   e(t) = alpha * h * rsqrt(mean(h^2) + eps),  h = fc2(silu(fc1([cos, sin](t * freqs))))
// Constants: F (flow width), FREQ (sinusoid size).

const WG_SIZE: u32 = 256u;
const HALF: u32 = FREQ / 2u;

struct Params {
    t: f32, first: u32, divisor: f32, eps: f32,
    freqs_kind: u32, freqs_word: u32, fc1_kind: u32, fc1_word: u32,
    fc1_scales: u32, fc1_padded: u32, fc1_bias_kind: u32, fc1_bias: u32,
    fc2_kind: u32, fc2_word: u32, fc2_scales: u32, fc2_padded: u32,
    fc2_bias_kind: u32, fc2_bias: u32, alpha_kind: u32, alpha_word: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> sinusoid: array<f32, FREQ>;
var<workgroup> hidden1: array<f32, F>;
var<workgroup> hidden2: array<f32, F>;

@compute @workgroup_size(256)
fn main(ids: Ids) {
    for (var i = ids.lid; i < HALF; i += WG_SIZE) {
        let sc = sincos(params.t * vector_at(params.freqs_kind, params.freqs_word, i));
        sinusoid[i] = sc.y;
        sinusoid[HALF + i] = sc.x;
    }
    workgroupBarrier();
    for (var r = ids.lid; r < F; r += WG_SIZE) {
        var v = vector_at(params.fc1_bias_kind, params.fc1_bias, r);
        var acc = 0.0;
        for (var j = 0u; j < FREQ; j++) {
            acc += weight_at(params.fc1_kind, params.fc1_word, params.fc1_scales, FREQ, params.fc1_padded, r, j) * sinusoid[j];
        }
        hidden1[r] = silu(acc + v);
    }
    workgroupBarrier();
    var sq = 0.0;
    for (var r = ids.lid; r < F; r += WG_SIZE) {
        var acc = 0.0;
        for (var j = 0u; j < F; j++) {
            acc += weight_at(params.fc2_kind, params.fc2_word, params.fc2_scales, F, params.fc2_padded, r, j) * hidden1[j];
        }
        let h = acc + vector_at(params.fc2_bias_kind, params.fc2_bias, r);
        hidden2[r] = h;
        sq += h * h;
    }
    let rms = 1.0 / sqrt(workgroup_sum(sq, ids) / f32(F) + params.eps);
    for (var r = ids.lid; r < F; r += WG_SIZE) {
        var v = vector_at(params.alpha_kind, params.alpha_word, r) * hidden2[r] * rms;
        if (params.first == 0u) { v += out[r]; }
        if (params.divisor != 0.0) { v = v / params.divisor; }
        out[r] = v;
    }
}
