// Test kernel: every element of one tensor through weight_at(), to check weights.wgsl's unpacking.
struct Params { kind: u32, base: u32, scales: u32, rows: u32, cols: u32, padded: u32, _a: u32, _b: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let n = params.rows * params.cols;
    if (gid.x >= n) { return; }
    let row = gid.x / params.cols;
    let col = gid.x % params.cols;
    out[gid.x] = weight_at(params.kind, params.base, params.scales, params.cols, params.padded, row, col);
}
