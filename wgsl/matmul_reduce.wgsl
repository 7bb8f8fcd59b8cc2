// The second half of a split-K matmul (matmul.wgsl with EPILOGUE 3): each output is the sum of its
// splits' partial products, then the bias and the epilogue (0 store, 1 exact GELU, 2 add to out).
// One invocation per output; the splits of one output are rows x cols apart, so neighbouring
// invocations read neighbouring words. Constants: EPILOGUE.

struct Params {
    rows: u32, cols: u32, splits: u32, has_bias: u32,
    bias_kind: u32, bias: u32, _pad0: u32, _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> partials: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let o = gid.x + gid.y * groups.x * 256u;
    let outputs = params.rows * params.cols;
    if (o >= outputs) { return; }
    // Every load before the first use of any (a load's first use stalls the loads after it): the
    // bias's word, the old output, then four splits a turn, added in split order.
    var bias = 0u;
    if (params.has_bias != 0u) { bias = vector_word(params.bias_kind, params.bias, o % params.cols); }
    var old = 0.0;
    if (EPILOGUE == 2u) { old = out[o]; }
    var v = 0.0;
    let last = params.splits - 1u;
    for (var s = 0u; s < params.splits; s += 4u) {
        let p0 = partials[s * outputs + o];
        let p1 = partials[min(s + 1u, last) * outputs + o];
        let p2 = partials[min(s + 2u, last) * outputs + o];
        let p3 = partials[min(s + 3u, last) * outputs + o];
        v += p0;
        if (s + 1u < params.splits) { v += p1; }
        if (s + 2u < params.splits) { v += p2; }
        if (s + 3u < params.splits) { v += p3; }
    }
    if (params.has_bias != 0u) { v += vector_value(params.bias_kind, bias, o % params.cols); }
    if (EPILOGUE == 1u) { v = gelu(v); }
    if (EPILOGUE == 2u) { v += old; }
    out[o] = v;
}
