// The key/value cache, shared by the step's and the prefill's attention. Per position, per layer:
// a row of keys then a row of values, `params.kv_row_words` u32 words each, heads side by side;
// f16 pairs packed with pack2x16float when KV_F16, else f32. The including shader declares
// `kv: array<u32>` and a `params` with `layer`, `layers` and `kv_row_words`. Writing: kv_cache_put.wgsl.

// The first word of `head` in the key (which = 0) or value (which = 1) row at `pos`.
fn kv_row(pos: u32, which: u32, head: u32) -> u32 {
    let base = ((pos * params.layers + params.layer) * 2u + which) * params.kv_row_words;
    if (KV_F16) { return base + head * (HEAD_DIM / 2u); }
    return base + head * HEAD_DIM;
}

// Dimensions 2j and 2j + 1 of a head's row.
fn kv_pair(row: u32, j: u32) -> vec2<f32> {
    if (KV_F16) { return unpack2x16float(kv[row + j]); }
    return vec2<f32>(bitcast<f32>(kv[row + 2u * j]), bitcast<f32>(kv[row + 2u * j + 1u]));
}
