// The codec's last layer: ELU, then the causal conv to one channel (taps over the stage's left
// context), plus bias, written as the take's samples; the first fade_samples samples of a take fade
// in linearly as the reference's PocketTTSProcessor.decode does (torch.linspace(0, 1, fade_samples)).
// 16 invocations per sample, 16 samples per workgroup (cin % 4 == 0): lane l takes the channel quads
// l, l + 16, ... of every tap, so that the 16 lanes of a sample read one row of the input side by side
// (with one invocation per sample, neighbours read rows cin values apart: a cache line per value).
// The lanes' sums are added in a fixed tree, whatever the chunk's size.

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

const LANES: u32 = 16u;
const SAMPLES: u32 = 256u / LANES;  // per workgroup

var<workgroup> parts: array<f32, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }
    let lane = lid % LANES;
    let m = wg.x * SAMPLES + lid / LANES;
    let depth = p.cin * p.taps;
    var acc = 0.0;
    if (m < p.rows) {
        for (var i = lane * 4u; i < p.cin; i += 4u * LANES) {
            for (var t = 0u; t < p.taps; t++) {
                let at = (m + t * p.dil) * p.cin + i;
                let xv = vec4<f32>(elu(x[at]), elu(x[at + 1u]), elu(x[at + 2u]), elu(x[at + 3u]));
                let wv = vec4<f32>(
                    weight_at(p.w_kind, p.w_word, p.w_scales, depth, p.w_padded, 0u, i * p.taps + t),
                    weight_at(p.w_kind, p.w_word, p.w_scales, depth, p.w_padded, 0u, (i + 1u) * p.taps + t),
                    weight_at(p.w_kind, p.w_word, p.w_scales, depth, p.w_padded, 0u, (i + 2u) * p.taps + t),
                    weight_at(p.w_kind, p.w_word, p.w_scales, depth, p.w_padded, 0u, (i + 3u) * p.taps + t),
                );
                acc += dot(xv, wv);
            }
        }
    }
    parts[lid] = acc;
    workgroupBarrier();
    for (var width = LANES / 2u; width > 0u; width /= 2u) {
        if (lane < width) {
            parts[lid] += parts[lid + width];
        }
        workgroupBarrier();
    }
    if (lane != 0u || m >= p.rows) {
        return;
    }
    var out = parts[lid];
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
