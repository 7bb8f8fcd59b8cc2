// One query (the step's row) against the KV cache, split over the keys (flash-decoding).
// Workgroup (head, split) takes an equal share of keys 0..pos and leaves, in `partials`, its
// unnormalised output o (head_dim values), its maximum score m and its sum of exp(score - m).
// gemv.wgsl's P_ATTN_MERGE prologue (the output projection) merges the splits: no extra dispatch.
//
// On the alignment layer, head `align_head` also leaves its raw scores over the text keys in this
// frame's alignment row; the merge turns them into probabilities.
//
// Constants: KV_F16, HEAD_DIM, CHUNK (the most keys one split can get).

const WG_SIZE: u32 = 256u;
const PAIRS: u32 = HEAD_DIM / 2u;
const GROUPS: u32 = WG_SIZE / PAIRS;  // key groups in the value pass

struct Params {
    gate: u32, layer: u32, layers: u32, heads: u32,
    splits: u32, part_stride: u32, kv_row_words: u32, align: u32,
    align_head: u32, align_stride: u32, scale: f32, _pad: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> state: array<u32>;
@group(0) @binding(2) var<storage, read> q: array<f32>;
@group(0) @binding(3) var<storage, read> kv: array<u32>;
@group(0) @binding(4) var<storage, read_write> partials: array<f32>;
@group(0) @binding(5) var<storage, read_write> alignment: array<f32>;

var<workgroup> qs: array<f32, HEAD_DIM>;
var<workgroup> scores: array<f32, CHUNK>;
var<workgroup> sums: array<f32, GROUPS * HEAD_DIM>;

// kv_row and kv_pair: kv_cache.wgsl

@compute @workgroup_size(256)
fn main(ids: Ids) {
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let head = ids.wg.x / params.splits;
    let split = ids.wg.x % params.splits;
    let keys = state[S_POS] + 1u;
    let chunk = (keys + params.splits - 1u) / params.splits;
    let start = min(split * chunk, keys);
    let count = min(chunk, keys - start);
    let hidden = params.heads * HEAD_DIM;
    if (ids.lid < HEAD_DIM) { qs[ids.lid] = q[head * HEAD_DIM + ids.lid]; }
    workgroupBarrier();

    let record = params.align != 0u && head == params.align_head;
    let voice = state[S_VOICE_ROWS];
    let text = state[S_TEXT];
    let align_row = state[S_FRAMES] * params.align_stride;
    var m = -3.0e38;
    for (var i = ids.lid; i < count; i += WG_SIZE) {
        let key = start + i;
        let row = kv_row(key, 0u, head);
        var s = 0.0;
        for (var j = 0u; j < PAIRS; j++) {
            s += dot(kv_pair(row, j), vec2<f32>(qs[2u * j], qs[2u * j + 1u]));
        }
        s = s * params.scale;
        scores[i] = s;
        m = max(m, s);
        if (record && key >= voice && key < voice + text) { alignment[align_row + key - voice] = s; }
    }
    let top = workgroup_max(m, ids);
    var l = 0.0;
    for (var i = ids.lid; i < count; i += WG_SIZE) {
        let p = exp(scores[i] - top);
        scores[i] = p;
        l += p;
    }
    let total = workgroup_sum(l, ids);  // its barriers also publish `scores`

    let pair = ids.lid % PAIRS;
    let group = ids.lid / PAIRS;
    // Four keys a turn, their loads issued together: a loop that waits for each load pays its
    // latency once per key. Keys past `count` get weight 0 and read the last key again.
    var o = vec2<f32>(0.0, 0.0);
    let last = max(count, 1u) - 1u;
    for (var i = group; i < count; i += 4u * GROUPS) {
        let i1 = min(i + GROUPS, last);
        let i2 = min(i + 2u * GROUPS, last);
        let i3 = min(i + 3u * GROUPS, last);
        let v0 = kv_pair(kv_row(start + i, 1u, head), pair);
        let v1 = kv_pair(kv_row(start + i1, 1u, head), pair);
        let v2 = kv_pair(kv_row(start + i2, 1u, head), pair);
        let v3 = kv_pair(kv_row(start + i3, 1u, head), pair);
        o += scores[i] * v0;
        o += select(0.0, scores[i1], i + GROUPS < count) * v1;
        o += select(0.0, scores[i2], i + 2u * GROUPS < count) * v2;
        o += select(0.0, scores[i3], i + 3u * GROUPS < count) * v3;
    }
    sums[group * HEAD_DIM + 2u * pair] = o.x;
    sums[group * HEAD_DIM + 2u * pair + 1u] = o.y;
    workgroupBarrier();
    let out = (head * params.splits + split) * params.part_stride;
    if (ids.lid < HEAD_DIM) {
        var v = 0.0;
        for (var g = 0u; g < GROUPS; g++) { v += sums[g * HEAD_DIM + ids.lid]; }
        partials[out + ids.lid] = v;
    }
    if (ids.lid == 0u) {
        partials[out + HEAD_DIM] = top;
        partials[out + HEAD_DIM + 1u] = total;
    }
}
