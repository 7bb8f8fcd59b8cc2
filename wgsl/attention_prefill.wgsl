// Causal attention of the prefill's rows against the KV cache: workgroup (row, head); row i at
// position base + i sees keys 0 ..= base + i. On the alignment layer, the BOS row (row T) of head
// align_head writes frame 0's alignment row: its probabilities over the text keys.
// Constants: KV_F16, HEAD_DIM, MAX_KEYS.

const WG_SIZE: u32 = 64u;
const PAIRS: u32 = HEAD_DIM / 2u;
const GROUPS: u32 = WG_SIZE / PAIRS;

struct Params {
    base_from_state: u32, layer: u32, layers: u32, heads: u32,
    kv_row_words: u32, align: u32, align_head: u32, scale: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> kv: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;
@group(0) @binding(5) var<storage, read_write> alignment: array<f32>;

var<workgroup> qs: array<f32, HEAD_DIM>;
var<workgroup> scores: array<f32, MAX_KEYS>;
var<workgroup> sums: array<f32, GROUPS * HEAD_DIM>;

// kv_row and kv_pair: kv_cache.wgsl

@compute @workgroup_size(64)
fn main(ids: Ids) {
    let row = ids.wg.x / params.heads;
    let head = ids.wg.x % params.heads;
    let hidden = params.heads * HEAD_DIM;
    var base = 0u;
    if (params.base_from_state != 0u) { base = state[S_VOICE_ROWS]; }
    let keys = base + row + 1u;
    for (var d = ids.lid; d < HEAD_DIM; d += WG_SIZE) { qs[d] = q[row * hidden + head * HEAD_DIM + d]; }
    workgroupBarrier();

    var m = -3.0e38;
    for (var i = ids.lid; i < keys; i += WG_SIZE) {
        let k = kv_row(i, 0u, head);
        var s = 0.0;
        for (var j = 0u; j < PAIRS; j++) { s += dot(kv_pair(k, j), vec2<f32>(qs[2u * j], qs[2u * j + 1u])); }
        s = s * params.scale;
        scores[i] = s;
        m = max(m, s);
    }
    let top = workgroup_max(m, ids);
    var l = 0.0;
    for (var i = ids.lid; i < keys; i += WG_SIZE) {
        let p = exp(scores[i] - top);
        scores[i] = p;
        l += p;
    }
    let total = workgroup_sum(l, ids);

    let pair = ids.lid % PAIRS;
    let group = ids.lid / PAIRS;
    var o = vec2<f32>(0.0, 0.0);
    for (var i = group; i < keys; i += GROUPS) { o += scores[i] * kv_pair(kv_row(i, 1u, head), pair); }
    sums[group * HEAD_DIM + 2u * pair] = o.x;
    sums[group * HEAD_DIM + 2u * pair + 1u] = o.y;
    workgroupBarrier();
    for (var d = ids.lid; d < HEAD_DIM; d += WG_SIZE) {
        var v = 0.0;
        for (var g = 0u; g < GROUPS; g++) { v += sums[g * HEAD_DIM + d]; }
        out[row * hidden + head * HEAD_DIM + d] = v / total;
    }

    if (params.align != 0u && head == params.align_head && row == state[S_TEXT]) {
        let text = state[S_TEXT];
        for (var t = ids.lid; t < text; t += WG_SIZE) { alignment[t] = scores[base + t] / total; }
    }
}
