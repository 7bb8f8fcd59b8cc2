// An empty dispatch with one binding, as cheap as a kernel can be: the benchmark's dispatch floor.
@group(0) @binding(0) var<storage, read_write> sink: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x == 0xffffffffu) {
        sink[0] = 1u;  // never true: keeps the binding in use without doing any work
    }
}
