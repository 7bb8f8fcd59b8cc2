// Reductions with subgroup operations (the kernel is built with the "subgroups" feature).
// Include exactly one of reduce_subgroups.wgsl / reduce_shared.wgsl; both define the same names.
// The including kernel defines `const WG_SIZE: u32` (its workgroup size) and takes `ids: Ids` in main.
//
// Assumes what every WebGPU implementation does for a 1-D workgroup: subgroup k holds the invocations
// with local_invocation_index in [k * size, (k + 1) * size). Any subgroup size works: sizes below 32
// combine their partial sums through workgroup memory, sizes of 32 or more reduce 32-lane groups with
// xor shuffles that never cross a 32-lane boundary.

struct Ids {
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(subgroup_size) sg_size: u32,
    @builtin(subgroup_invocation_id) sg_lane: u32,
}

var<workgroup> reduce_scratch: array<f32, 256>;

// The sum of `v` over the whole workgroup, returned to every invocation.
fn workgroup_sum(v: f32, ids: Ids) -> f32 {
    let s = subgroupAdd(v);
    workgroupBarrier();
    if (ids.sg_lane == 0u) { reduce_scratch[ids.lid / ids.sg_size] = s; }
    workgroupBarrier();
    var total = 0.0;
    let parts = max(WG_SIZE / ids.sg_size, 1u);
    for (var i = 0u; i < parts; i++) { total += reduce_scratch[i]; }
    return total;
}

// Two sums at once (a LayerNorm's sum and sum of squares): one reduction's barriers for both.
fn workgroup_sum2(v: vec2<f32>, ids: Ids) -> vec2<f32> {
    let s = subgroupAdd(v);
    workgroupBarrier();
    if (ids.sg_lane == 0u) {
        reduce_scratch[ids.lid / ids.sg_size] = s.x;
        reduce_scratch[128u + ids.lid / ids.sg_size] = s.y;
    }
    workgroupBarrier();
    var total = vec2<f32>(0.0);
    let parts = max(WG_SIZE / ids.sg_size, 1u);
    for (var i = 0u; i < parts; i++) { total += vec2<f32>(reduce_scratch[i], reduce_scratch[128u + i]); }
    return total;
}

// The maximum of `v` over the whole workgroup, returned to every invocation.
fn workgroup_max(v: f32, ids: Ids) -> f32 {
    let s = subgroupMax(v);
    workgroupBarrier();
    if (ids.sg_lane == 0u) { reduce_scratch[ids.lid / ids.sg_size] = s; }
    workgroupBarrier();
    var best = reduce_scratch[0];
    let parts = max(WG_SIZE / ids.sg_size, 1u);
    for (var i = 1u; i < parts; i++) { best = max(best, reduce_scratch[i]); }
    return best;
}

// The sum of `v` over each aligned group of `lanes` invocations (one GEMV row; lanes a power of two
// up to 256); valid in lane 0 of the group.
fn lanes_sum(v: f32, ids: Ids, lanes: u32) -> f32 {
    let width = min(ids.sg_size, lanes);
    var s = v;
    for (var mask = 1u; mask < width; mask = mask << 1u) { s += subgroupShuffleXor(s, mask); }
    workgroupBarrier();
    if ((ids.sg_lane & (width - 1u)) == 0u) { reduce_scratch[ids.lid / width] = s; }
    workgroupBarrier();
    let per_row = lanes / width;
    let first = (ids.lid / lanes) * per_row;
    var total = 0.0;
    for (var i = 0u; i < per_row; i++) { total += reduce_scratch[first + i]; }
    return total;
}
