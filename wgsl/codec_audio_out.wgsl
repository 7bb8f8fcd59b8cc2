// The codec's last layer: ELU, then the causal conv to one channel (taps over the stage's left
// context), plus bias, written as the take's samples; the first fade_samples samples of a take fade
// in linearly as the reference's PocketTTSProcessor.decode does (torch.linspace(0, 1, fade_samples)).
// 64 samples per workgroup, 4 threads per sample, each over a quarter of the channels (cin % 4 == 0);
// the quarters are added in order.

struct Params {
    rows: u32,          // samples in this chunk
    cin: u32,
    taps: u32,
    dil: u32,
    w_kind: u32,
    w_word: u32,
    w_scales: u32,
    w_padded: u32,
    bias_kind: u32,
    bias_word: u32,
    samples_per_frame: u32,
    max_samples: u32,
    fade_samples: u32,
    frame_word: u32,
    end_word: u32,
    avail_word: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> audio: array<f32>;
@group(0) @binding(4) var<storage, read> state: array<u32>;

// torch.linspace(0, 1, n)[i] in f32: the first half counts up from 0, the second down from 1.
fn fade(i: u32, n: u32) -> f32 {
    let step = 1.0 / f32(n - 1u);
    if (i < n / 2u) {
        return f32(i) * step;
    }
    return 1.0 - step * f32(n - 1u - i);
}

var<workgroup> quarters: array<f32, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }
    let m = wg.x * 64u + lid % 64u;
    let quarter = lid / 64u;
    let depth = p.cin * p.taps;
    let per = p.cin / 4u;
    var acc = 0.0;
    if (m < p.rows) {
        for (var i = quarter * per; i < (quarter + 1u) * per; i++) {
            for (var t = 0u; t < p.taps; t++) {
                let w = weight_at(p.w_kind, p.w_word, p.w_scales, depth, p.w_padded, 0u, i * p.taps + t);
                acc += w * elu(x[(m + t * p.dil) * p.cin + i]);
            }
        }
    }
    quarters[lid] = acc;
    workgroupBarrier();
    if (quarter != 0u || m >= p.rows) {
        return;
    }
    var out = ((quarters[lid] + quarters[lid + 64u]) + quarters[lid + 128u]) + quarters[lid + 192u];
    if (p.bias_kind != 3u) {
        out += vector_at(p.bias_kind, p.bias_word, 0u);
    }
    let sample = start * p.samples_per_frame + m;
    if (sample < p.fade_samples) {
        out *= fade(sample, p.fade_samples);
    }
    if (sample < p.max_samples) {
        audio[sample] = out;
    }
}
