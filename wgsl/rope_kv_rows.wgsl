// The prefill's q, k, v rows (from the fused in_proj, q and k in interleaved RoPE pairs as the
// checkpoint stores them): rotate q and k by their position, keep q, write k and v into the KV
// cache. Row i sits at position base + i, base = 0 (a voice) or the voice rows (a text).
// One workgroup per row. Constants: KV_F16, HIDDEN, HEAD_DIM.

const WG_SIZE: u32 = 256u;

struct Params { base_from_state: u32, layer: u32, layers: u32, kv_row_words: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read> qkv: array<f32>;
@group(0) @binding(3) var<storage, read> rope: array<f32>;
@group(0) @binding(4) var<storage, read_write> q: array<f32>;
@group(0) @binding(5) var<storage, read_write> kv: array<u32>;

// kv_put: kv_cache_put.wgsl; rope_rotate: lm_math.wgsl

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let row = wg.x;
    var pos = row;
    if (params.base_from_state != 0u) { pos += state[S_VOICE_ROWS]; }
    for (var p = lid; p < 3u * HIDDEN / 2u; p += WG_SIZE) {
        let r = 2u * p;
        let a = qkv[row * 3u * HIDDEN + r];
        let b = qkv[row * 3u * HIDDEN + r + 1u];
        if (r < 2u * HIDDEN) {
            let t = (pos * (HEAD_DIM / 2u) + (r % HEAD_DIM) / 2u) * 2u;
            let v = rope_rotate(a, b, vec2<f32>(rope[t], rope[t + 1u]));
            if (r < HIDDEN) {
                q[row * HIDDEN + r] = v.x;
                q[row * HIDDEN + r + 1u] = v.y;
            } else {
                kv_put(pos, 0u, r - HIDDEN, v);
            }
        } else {
            kv_put(pos, 1u, r - 2u * HIDDEN, vec2<f32>(a, b));
        }
    }
}
