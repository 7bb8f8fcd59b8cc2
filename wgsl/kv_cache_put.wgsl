// Writing the key/value cache (kv_cache.wgsl describes its layout and reads it): for the kernels that
// declare `kv` read_write (rope_kv_rows.wgsl, attention_step.wgsl). A file of its own because WGSL
// refuses a store to `kv` in a shader that declares it read-only, even in a function it never calls.

// Dimensions dim and dim + 1 (dim even, the heads side by side) of the key (which = 0) or value (1)
// row at `pos`.
fn kv_put(pos: u32, which: u32, dim: u32, value: vec2<f32>) {
    let row = kv_row(pos, which, 0u);
    if (KV_F16) {
        kv[row + dim / 2u] = pack2x16float(value);
    } else {
        kv[row + dim] = bitcast<u32>(value.x);
        kv[row + dim + 1u] = bitcast<u32>(value.y);
    }
}
