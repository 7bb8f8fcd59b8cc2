// gemv.wgsl's `extra` binding as plain words (every epilogue but E_DOWN_SPLIT): the end-of-speech
// logits, the alignment rows, the noise. gemv_extra_atomic.wgsl is the same binding for E_DOWN_SPLIT;
// gemv.wgsl reaches it only through these functions, so one kernel source serves both.
@group(0) @binding(6) var<storage, read_write> extra: array<u32>;

fn extra_get(i: u32) -> u32 {
    return extra[i];
}

fn extra_set(i: u32, v: u32) {
    extra[i] = v;
}

fn extra_add(i: u32, v: u32) {  // (unused here; E_DOWN_SPLIT's atomic twin is the one that runs)
    extra[i] = extra[i] + v;
}
