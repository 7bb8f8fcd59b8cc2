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
var<workgroup> key_count: u32;  // `count` made visibly uniform for the score loop's barriers

// kv_row and kv_pair: kv_cache.wgsl

const KEY_LANES: u32 = 8u;                      // lanes that share a key in the score pass
const KEYS_AT_ONCE: u32 = WG_SIZE / KEY_LANES;  // keys a turn of the score pass
const PAIRS_PER_LANE: u32 = PAIRS / KEY_LANES;

fn q_pair(j: u32) -> vec2<f32> {
    return vec2<f32>(qs[2u * j], qs[2u * j + 1u]);
}

// This lane's part of a key's score (the key row at `row`): its PAIRS_PER_LANE pairs, four loads side
// by side a turn (one turn at head_dim 64): a loop that waits for each load pays a latency a pair.
fn score_part(row: u32, key_lane: u32) -> f32 {
    let first = key_lane * PAIRS_PER_LANE;
    let last = first + PAIRS_PER_LANE - 1u;
    var s = 0.0;
    for (var b = 0u; b < PAIRS_PER_LANE; b += 4u) {
        let j = first + b;
        let j1 = min(j + 1u, last);
        let j2 = min(j + 2u, last);
        let j3 = min(j + 3u, last);
        let p0 = kv_pair(row, j);
        let p1 = kv_pair(row, j1);
        let p2 = kv_pair(row, j2);
        let p3 = kv_pair(row, j3);
        s += dot(p0, q_pair(j));
        s += select(0.0, dot(p1, q_pair(j1)), b + 1u < PAIRS_PER_LANE);
        s += select(0.0, dot(p2, q_pair(j2)), b + 2u < PAIRS_PER_LANE);
        s += select(0.0, dot(p3, q_pair(j3)), b + 3u < PAIRS_PER_LANE);
    }
    return s;
}

@compute @workgroup_size(256)
fn main(ids: Ids) {
    let head = ids.wg.x / params.splits;
    let split = ids.wg.x % params.splits;
    // loads that wait on nothing, issued before the gate's wait
    let q_value = q[head * HEAD_DIM + min(ids.lid, HEAD_DIM - 1u)];
    let keys = state[S_POS] + 1u;
    let voice = state[S_VOICE_ROWS];
    let text = state[S_TEXT];
    let align_row = state[S_FRAMES] * params.align_stride;
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let chunk = (keys + params.splits - 1u) / params.splits;
    let start = min(split * chunk, keys);
    let count = min(chunk, keys - start);
    let last = max(count, 1u) - 1u;  // the split's last key (a key past it is read as this one, weight 0)
    if (ids.lid < HEAD_DIM) { qs[ids.lid] = q_value; }

    // Scores: KEY_LANES lanes share each key, KEYS_AT_ONCE keys a turn.
    let record = params.align != 0u && head == params.align_head;
    let key_lane = ids.lid % KEY_LANES;
    let slot = ids.lid / KEY_LANES;
    // The loop has barriers (lanes_sum), so its bound must be uniform to WGSL's analysis, which counts
    // anything derived from the workgroup id as possibly non-uniform.
    if (ids.lid == 0u) { key_count = count; }
    let uniform_count = workgroupUniformLoad(&key_count);  // its barrier also publishes `qs`
    var m = -3.0e38;
    for (var i0 = 0u; i0 < uniform_count; i0 += KEYS_AT_ONCE) {
        let i = i0 + slot;
        let key = start + min(i, last);
        let s = lanes_sum(score_part(kv_row(key, 0u, head), key_lane), ids, KEY_LANES) * params.scale;
        if (key_lane == 0u && i < count) {
            scores[i] = s;
            m = max(m, s);
            if (record && key >= voice && key < voice + text) { alignment[align_row + key - voice] = s; }
        }
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
