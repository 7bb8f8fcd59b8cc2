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

fn kv_write(pos: u32, which: u32, dim: u32, value: vec2<f32>) {
    let base = ((pos * params.layers + params.layer) * 2u + which) * params.kv_row_words;
    if (KV_F16) {
        kv[base + dim / 2u] = pack2x16float(value);
    } else {
        kv[base + dim] = bitcast<u32>(value.x);
        kv[base + dim + 1u] = bitcast<u32>(value.y);
    }
}

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
            let c = rope[t];
            let s = rope[t + 1u];
            let x = a * c - b * s;
            let y = b * c + a * s;
            if (r < HIDDEN) {
                q[row * HIDDEN + r] = x;
                q[row * HIDDEN + r + 1u] = y;
            } else {
                kv_write(pos, 0u, r - HIDDEN, vec2<f32>(x, y));
            }
        } else {
            kv_write(pos, 1u, r - 2u * HIDDEN, vec2<f32>(a, b));
        }
    }
}
