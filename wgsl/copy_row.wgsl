// The BOS row's residual (prefill row T) becomes the step's input vector: frame 0's hidden state.
// Constant: HIDDEN.

@group(0) @binding(0) var<storage, read> state: array<u32>;
@group(0) @binding(1) var<storage, read> rows: array<f32>;
@group(0) @binding(2) var<storage, read_write> x: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
    let base = state[S_TEXT] * HIDDEN;
    for (var d = lid; d < HIDDEN; d += 64u) { x[d] = rows[base + d]; }
}
