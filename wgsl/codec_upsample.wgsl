// The codec's input: latents (already denormalised, written by the language model) through the 1x1
// latent projection (no bias) and the depthwise transposed conv (kernel 2s, stride s, no bias) that
// makes s rows per frame:
//   h[f][c] = sum_i proj[c][i] * latents[f][i]
//   out[s*f + t][c] = up[c][t] * h[f][c] + up[c][t + s] * h[f - 1][c]      (h[-1] = 0)
// The previous frame comes from the latents buffer itself, which holds the whole take, so this stage
// keeps no state. One thread per (frame, channel).

struct Params {
    frames: u32,
    hidden: u32,
    latent_dim: u32,
    stride: u32,
    proj_kind: u32,
    proj_word: u32,
    proj_scales: u32,
    proj_padded: u32,
    up_kind: u32,
    up_word: u32,
    up_scales: u32,
    up_padded: u32,
    lat_word: u32,     // where frame 0 of the take starts in `latents` (f32 words)
    lat_ld: u32,
    max_frames: u32,   // latents past this are read as zeros
    y_row0: u32,
    frame_word: u32,
    end_word: u32,
    avail_word: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> latents: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<storage, read> state: array<u32>;

// h of frames f and f - 1 for channel c (zero outside 0 .. max_frames - 1); latent_dim % 4 == 0.
fn project(frame: u32, c: u32) -> vec2<f32> {
    var acc = vec2<f32>(0.0);
    let now = frame < p.max_frames;
    let before = frame > 0u && frame - 1u < p.max_frames;
    let base = p.lat_word + frame * p.lat_ld;
    let dim = p.latent_dim;
    for (var i = 0u; i < dim; i += 4u) {
        let w = vec4<f32>(
            weight_at(p.proj_kind, p.proj_word, p.proj_scales, dim, p.proj_padded, c, i),
            weight_at(p.proj_kind, p.proj_word, p.proj_scales, dim, p.proj_padded, c, i + 1u),
            weight_at(p.proj_kind, p.proj_word, p.proj_scales, dim, p.proj_padded, c, i + 2u),
            weight_at(p.proj_kind, p.proj_word, p.proj_scales, dim, p.proj_padded, c, i + 3u),
        );
        if (now) {
            acc.x += dot(w, vec4<f32>(latents[base + i], latents[base + i + 1u], latents[base + i + 2u],
                                      latents[base + i + 3u]));
        }
        if (before) {
            let b = base - p.lat_ld;
            acc.y += dot(w, vec4<f32>(latents[b + i], latents[b + i + 1u], latents[b + i + 2u], latents[b + i + 3u]));
        }
    }
    return acc;
}

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }
    let c = gid.x % p.hidden;
    let f = gid.x / p.hidden;
    if (f >= p.frames) {
        return;
    }
    let h = project(start + f, c);
    let now = h.x;
    let before = h.y;
    let taps = 2u * p.stride;
    for (var t = 0u; t < p.stride; t++) {
        let w_now = weight_at(p.up_kind, p.up_word, p.up_scales, taps, p.up_padded, c, t);
        let w_before = weight_at(p.up_kind, p.up_word, p.up_scales, taps, p.up_padded, c, t + p.stride);
        y[(p.y_row0 + f * p.stride + t) * p.hidden + c] = w_now * now + w_before * before;
    }
}
