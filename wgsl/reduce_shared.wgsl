// Reductions through workgroup memory only, for devices without subgroups. Same names as
// reduce_subgroups.wgsl; the including kernel defines `const WG_SIZE: u32` and takes `ids: Ids`.
// Few barriers on purpose: software adapters pay dearly for each one.

struct Ids {
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
}

var<workgroup> reduce_scratch: array<f32, 256>;
var<workgroup> reduce_partial: array<f32, 16>;
var<workgroup> reduce_scratch2: array<f32, 256>;
var<workgroup> reduce_partial2: array<f32, 16>;

// The sum of `v` over the whole workgroup, returned to every invocation.
fn workgroup_sum(v: f32, ids: Ids) -> f32 {
    workgroupBarrier();
    reduce_scratch[ids.lid] = v;
    workgroupBarrier();
    if (ids.lid < 16u) {
        var s = 0.0;
        for (var i = ids.lid; i < WG_SIZE; i += 16u) { s += reduce_scratch[i]; }
        reduce_partial[ids.lid] = s;
    }
    workgroupBarrier();
    var total = 0.0;
    for (var i = 0u; i < min(16u, WG_SIZE); i++) { total += reduce_partial[i]; }
    return total;
}

// Two sums at once (a LayerNorm's sum and sum of squares): one reduction's barriers for both.
fn workgroup_sum2(v: vec2<f32>, ids: Ids) -> vec2<f32> {
    workgroupBarrier();
    reduce_scratch[ids.lid] = v.x;
    reduce_scratch2[ids.lid] = v.y;
    workgroupBarrier();
    if (ids.lid < 16u) {
        var s = vec2<f32>(0.0);
        for (var i = ids.lid; i < WG_SIZE; i += 16u) { s += vec2<f32>(reduce_scratch[i], reduce_scratch2[i]); }
        reduce_partial[ids.lid] = s.x;
        reduce_partial2[ids.lid] = s.y;
    }
    workgroupBarrier();
    var total = vec2<f32>(0.0);
    for (var i = 0u; i < min(16u, WG_SIZE); i++) { total += vec2<f32>(reduce_partial[i], reduce_partial2[i]); }
    return total;
}

// The maximum of `v` over the whole workgroup, returned to every invocation.
fn workgroup_max(v: f32, ids: Ids) -> f32 {
    workgroupBarrier();
    reduce_scratch[ids.lid] = v;
    workgroupBarrier();
    if (ids.lid < 16u) {
        var s = reduce_scratch[ids.lid];
        for (var i = ids.lid + 16u; i < WG_SIZE; i += 16u) { s = max(s, reduce_scratch[i]); }
        reduce_partial[ids.lid] = s;
    }
    workgroupBarrier();
    var best = reduce_partial[0];
    for (var i = 1u; i < min(16u, WG_SIZE); i++) { best = max(best, reduce_partial[i]); }
    return best;
}

// The sum of `v` over each aligned group of `lanes` invocations (one GEMV row; lanes a power of two
// up to 256); valid in lane 0 of the group.
fn lanes_sum(v: f32, ids: Ids, lanes: u32) -> f32 {
    workgroupBarrier();
    reduce_scratch[ids.lid] = v;
    workgroupBarrier();
    var total = 0.0;
    if ((ids.lid & (lanes - 1u)) == 0u) {
        for (var i = 0u; i < lanes; i++) { total += reduce_scratch[ids.lid + i]; }
    }
    return total;
}
