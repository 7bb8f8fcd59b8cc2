// Writes one vec4 per invocation over a buffer larger than the GPU's L2 cache, so that whatever ran
// before it finds nothing of its own there (bench/l2_probe.py).
@group(0) @binding(0) var<storage, read_write> big: array<vec4<u32>>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    big[g.x] = vec4<u32>(g.x);
}
