// The prefill's text rows: row i < T is the embedding of text id i, rows after T (padding up to the
// prefill size) are zero. Row T, the BOS row, is condition.wgsl's. One workgroup per row.
// Constant: HIDDEN.

const WG_SIZE: u32 = 64u;

struct Params { kind: u32, word: u32, scales: u32, padded: u32 }

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read> text_ids: array<u32>;
@group(0) @binding(4) var<storage, read_write> rows: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let row = wg.x;
    let text = state[S_TEXT];
    if (row == text) { return; }
    for (var d = lid; d < HIDDEN; d += WG_SIZE) {
        var v = 0.0;
        if (row < text) {
            v = weight_at(params.kind, params.word, params.scales, HIDDEN, params.padded, text_ids[row], d);
        }
        rows[row * HIDDEN + d] = v;
    }
}
