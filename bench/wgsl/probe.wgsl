// Probe kernels for bench/dispatch_costs.py: what a dependent dispatch costs on top of an empty one.
// MODE 0: nothing; 1: the step's gate (one state word, a workgroup-uniform load);
// 2: the gate, then DEPTH dependent loads (a pointer chase through `data`), then one store;
// 3: the gate, then DEPTH workgroup barriers; 4: the gate, then DEPTH independent 16-byte loads per lane;
// 5: the least a step kernel does: the gate, its input (what the previous dispatch stored, 256 values),
//    a sum over the workgroup (DEPTH rounds through workgroup memory, as a LayerNorm's statistics) and
//    a store that the next dispatch reads (workgroup 0 stores while the others may still read: the
//    values race, which the probe never looks at, the timing does not).
@group(0) @binding(0) var<storage, read_write> state: array<u32>;
@group(0) @binding(1) var<storage, read> data: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> sink: array<u32>;

var<workgroup> flag: u32;
var<workgroup> partial: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    if (MODE == 0u) {
        if (wg.x == 0xffffffffu) { sink[0] = state[0]; }
        return;
    }
    if (lid == 0u) { flag = state[0]; }
    let gate = workgroupUniformLoad(&flag);
    if (gate == 7u) { return; }
    var v = lid + wg.x * 256u;
    if (MODE == 2u) {
        for (var i = 0u; i < DEPTH; i++) { v = data[v & 65535u].x; }
    } else if (MODE == 3u) {
        for (var i = 0u; i < DEPTH; i++) { workgroupBarrier(); }
    } else if (MODE == 4u) {
        var acc = vec4<u32>(0u);
        for (var i = 0u; i < DEPTH; i++) { acc += data[(wg.x * DEPTH + i) * 256u % 65536u + lid]; }
        v = acc.x ^ acc.y ^ acc.z ^ acc.w;
    } else if (MODE == 5u) {
        partial[lid] = sink[lid];
        for (var i = 0u; i < DEPTH; i++) {
            workgroupBarrier();
            let mine = partial[lid] + partial[(lid + 128u) % 256u];
            workgroupBarrier();
            partial[lid] = mine;
        }
        workgroupBarrier();
        if (wg.x == 0u) { sink[lid] = partial[lid] + 1u; }
        return;
    }
    if (lid == 0u) { sink[wg.x] = v; }
}
