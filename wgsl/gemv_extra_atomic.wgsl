// gemv.wgsl's `extra` binding as atomic words, for E_DOWN_SPLIT: every workgroup adds its share of
// fc2 to the same sums (lm_sums.wgsl's sum_share). See gemv_extra.wgsl.
@group(0) @binding(6) var<storage, read_write> extra: array<atomic<u32>>;

fn extra_get(i: u32) -> u32 {
    return atomicLoad(&extra[i]);
}

fn extra_set(i: u32, v: u32) {
    atomicStore(&extra[i], v);
}

fn extra_add(i: u32, v: u32) {
    atomicAdd(&extra[i], v);
}
