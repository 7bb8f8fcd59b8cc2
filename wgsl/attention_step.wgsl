// A layer's attention for the step's one row, from the residual stream to the split partials, in one
// dispatch: LayerNorm (norm1), the head's q, k and v rows of in_proj, RoPE, the new key and value into
// the KV cache, and q against the cache split over the keys (flash-decoding). gemv.wgsl's
// P_ATTN_MERGE prologue (the output projection) merges the splits: no extra dispatch there either.
//
// Why the projection lives here: on the step's chain a dispatch costs a launch and a memory latency
// (about 9 us on the H200, where a 1536 x 512 int8 product is well under 1 us of bandwidth), so the
// QKV product as its own dispatch cost more than its work. Here every workgroup of a head makes the
// head's q itself (64 rows of 512: 32 KiB of int8, loaded before its first wait), which is the price
// of one dispatch a layer fewer. Every workgroup makes exactly HEAD_DIM rows, since the kernel lasts
// as long as its slowest workgroup: one that made q and k whole (128 rows) cost 1.5 us more
// (bench/results/h200-ab-attention-roles-2026-11-30.json).
//
// Workgroups: OLD_SPLITS + 3 per head, head-major; each makes HEAD_DIM "role rows" of in_proj.
//   role s < OLD_SPLITS   q; attends over its share of the keys already cached (0..pos-1): part s
//   role NEW_KEY + h      (h = 0, 1) half h of q and the same half of k; that half of k into the cache
//                         at pos, and q.k * scale over the half as part OLD_SPLITS's word HEAD_DIM + h
//   role NEW_VALUE        v; v into the cache at pos and as part OLD_SPLITS's output
// so the merge sees OLD_SPLITS + 1 parts a head; each part leaves its unnormalised output o
// (head_dim values), its maximum score m and its sum of exp(score - m), except the last: the new key
// is its only key, so its sum is 1 and its maximum the new key's score, which the merge adds up from
// the two halves (gemv_early_loads.wgsl). The new key's score is made from the f32 q and k (the cache
// keeps them as KV_F16 says), as the reference does.
//
// On the alignment layer, head `align_head` also leaves its raw scores over the text keys in this
// frame's alignment row; the merge turns them into probabilities.
//
// After a fused feed-forward (gemv.wgsl's E_DOWN_SPLIT) the layer's input is x plus that block's exact
// sums (lm_sums.wgsl), kept in `partials` past the parts: sum_in says where (1 + the word; 0 when x is
// the whole input). Workgroup 0 clears the sums this layer's own feed-forward adds to (sum_clear, the
// same way): the previous layer's block is done with them, and this layer's has not begun.
//
// Constants: K, KP (the model width; KP rounded up to 32), LANES (lanes per matrix row, ROWS_PASS rows
// a pass, PASSES passes make a head's HEAD_DIM rows), KV_F16, HEAD_DIM, CHUNK (the most keys one
// split can get), OLD_SPLITS. Row dot products: row_dot.wgsl.

const WG_SIZE: u32 = 256u;
const PAIRS: u32 = HEAD_DIM / 2u;
const GROUPS: u32 = WG_SIZE / PAIRS;  // key groups in the value pass
const ROWS_PASS: u32 = WG_SIZE / LANES;
const PASSES: u32 = HEAD_DIM / ROWS_PASS;  // 1 or 2 (lm_ops checks)
const XTURNS: u32 = (KP + WG_SIZE - 1u) / WG_SIZE;  // input elements an invocation (at most 4)
const HALF: u32 = HEAD_DIM / 2u;
const NEW_KEY: u32 = OLD_SPLITS;             // and NEW_KEY + 1
const NEW_VALUE: u32 = OLD_SPLITS + 2u;
const ROLES: u32 = OLD_SPLITS + 3u;

struct Params {
    gate: u32, layer: u32, layers: u32, heads: u32,
    part_stride: u32, kv_row_words: u32, align: u32, align_head: u32,
    align_stride: u32, scale: f32, w_kind: u32, w_word: u32,
    w_scales: u32, ln_w: u32, ln_b: u32, ln_kind: u32,
    ln_affine: u32, ln_eps: f32, sum_in: u32, sum_clear: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read> state: array<u32>;
@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(4) var<storage, read> rope: array<f32>;
@group(0) @binding(5) var<storage, read_write> kv: array<u32>;
@group(0) @binding(6) var<storage, read_write> partials: array<f32>;
@group(0) @binding(7) var<storage, read_write> alignment: array<f32>;

var<workgroup> xs: array<vec4<f32>, KP / 4u>;  // x, four values an element (row_dot.wgsl)
var<workgroup> rows: array<f32, HEAD_DIM>;  // the role rows, before RoPE
var<workgroup> qs: array<vec2<f32>, PAIRS>;   // q after RoPE, a pair an element (one clamped read)
var<workgroup> scores: array<f32, CHUNK>;
var<workgroup> sums: array<f32, GROUPS * HEAD_DIM>;
var<workgroup> uniform_slot: u32;  // a value made visibly uniform for the barriers that follow it

// kv_row, kv_pair: kv_cache.wgsl; kv_put: kv_cache_put.wgsl; rope_rotate: lm_math.wgsl;
// RowShare, share_dot, row_dot_loaded: row_dot.wgsl

// ---- the projection -----------------------------------------------------------------------------
// Element i of the input as loaded (past K: element K - 1, counted as 0), with its norm weight and
// bias as raw words (weights.wgsl's vector_value makes them numbers where they are used), and the
// words of its feed-forward sum (sum_in).
struct Elem { v: f32, w: u32, b: u32, sum: vec2<u32> }

fn load_elem(i: u32) -> Elem {
    let j = min(i, K - 1u);
    var e = Elem(x[j], 0u, 0u, vec2<u32>(0u));
    if (params.sum_in != 0u) {
        let at = params.sum_in - 1u + j;
        e.sum = vec2<u32>(bitcast<u32>(partials[at]), bitcast<u32>(partials[at + K]));
    }
    if (params.ln_affine != 0u) {
        e.w = vector_word(params.ln_kind, params.ln_w, j);
        e.b = vector_word(params.ln_kind, params.ln_b, j);
    }
    return e;
}

struct Inputs { e0: Elem, e1: Elem, e2: Elem, e3: Elem }

fn load_inputs(lid: u32) -> Inputs {
    var v: Inputs;
    v.e0 = load_elem(lid);
    if (XTURNS > 1u) { v.e1 = load_elem(lid + WG_SIZE); }
    if (XTURNS > 2u) { v.e2 = load_elem(lid + 2u * WG_SIZE); }
    if (XTURNS > 3u) { v.e3 = load_elem(lid + 3u * WG_SIZE); }
    return v;
}

// The input's element from its loads: x, plus the feed-forward sum when there is one.
fn elem_value(e: Elem) -> f32 {
    return select(e.v, e.v + sum_value(e.sum), params.sum_in != 0u);
}

fn put_normed(i: u32, e: Elem, mean: f32, rstd: f32) {
    var v = (elem_value(e) - mean) * rstd;
    if (params.ln_affine != 0u) {
        v = v * vector_value(params.ln_kind, e.w, i) + vector_value(params.ln_kind, e.b, i);
    }
    if (i < KP) { x_put(i, select(0.0, v, i < K)); }
}

// Element i's value and square for the norm's sums (0 past K).
fn sum_sq(e: Elem, i: u32) -> vec2<f32> {
    let x = select(0.0, elem_value(e), i < K);
    return vec2<f32>(x, x * x);
}

// LayerNorm of the input into xs (one pass: the sum and the sum of squares together, as gemv does).
fn normed_into_xs(ids: Ids, v: Inputs) {
    let i = ids.lid;
    let s = sum_sq(v.e0, i) + sum_sq(v.e1, i + WG_SIZE) + sum_sq(v.e2, i + 2u * WG_SIZE)
        + sum_sq(v.e3, i + 3u * WG_SIZE);
    let sums = workgroup_sum2(s, ids) / f32(K);
    let mean = sums.x;
    let rstd = 1.0 / sqrt(max(sums.y - mean * mean, 0.0) + params.ln_eps);
    put_normed(ids.lid, v.e0, mean, rstd);
    if (XTURNS > 1u) { put_normed(ids.lid + WG_SIZE, v.e1, mean, rstd); }
    if (XTURNS > 2u) { put_normed(ids.lid + 2u * WG_SIZE, v.e2, mean, rstd); }
    if (XTURNS > 3u) { put_normed(ids.lid + 3u * WG_SIZE, v.e3, mean, rstd); }
}

// in_proj's row for role row r (0..HEAD_DIM) of `role` in `head`: q's row r (v's for NEW_VALUE); for
// the new key's half h, q's rows of that half, then k's.
fn in_proj_row(role: u32, head: u32, r: u32) -> u32 {
    var which = select(0u, 2u, role == NEW_VALUE);
    var row = r;
    if (role == NEW_KEY || role == NEW_KEY + 1u) {
        which = select(0u, 1u, r >= HALF);
        row = (role - NEW_KEY) * HALF + r % HALF;
    }
    return (which * params.heads + head) * HEAD_DIM + row;
}

fn early_share(role: u32, head: u32, part: u32, local_row: u32, lane: u32) -> RowShare {
    var r: RowShare;
    if (params.w_kind != KIND_Q8 || part >= PASSES) { return r; }
    let row = in_proj_row(role, head, part * ROWS_PASS + local_row);
    return load_q8_share(params.w_word, params.w_scales, row, lane);
}

// One pass of the role rows: the dot products, summed over each row's lanes into `rows`.
fn project(share: RowShare, role: u32, head: u32, part: u32, ids: Ids) {
    let local_row = ids.lid / LANES;
    let lane = ids.lid % LANES;
    let r = part * ROWS_PASS + local_row;
    var acc = 0.0;
    if (share.q8) {
        acc = share_dot(share, lane);
    } else {
        let row = in_proj_row(role, head, r);
        acc = row_dot_loaded(params.w_kind, params.w_word, params.w_scales, KP, row, lane);
    }
    let total = lanes_sum(acc, ids, LANES);
    if (lane == 0u) { rows[r] = total; }
}

// ---- the scores over cached keys ----------------------------------------------------------------
// A split's keys go in turns (a turn waits for its loads and its reductions): late in a long take a
// split holds ~140 keys, so the turns are made wide. 4 lanes a key (64 keys a turn, 8 pairs a lane at
// head_dim 64) and 8 keys a group in the value pass (64 keys a turn) took 8 and 4 before (32 keys):
// whole takes 7% faster on the H200 (bench/results/h200-ab-wide-turns-2026-12-01.json); 128 keys a
// turn made the step slower. The loads of a turn are written out side by side, not looped over: the
// same widths through constant-count loops were slower (h200-ab-attention-eight-keys-2026-11-30.json).
const KEY_LANES: u32 = 4u;                      // lanes that share a key in the score pass
const KEYS_AT_ONCE: u32 = WG_SIZE / KEY_LANES;  // keys a turn of the score pass
const PAIRS_PER_LANE: u32 = PAIRS / KEY_LANES;
const V_KEYS: u32 = 8u;                         // keys a group takes a turn of the value pass
// the f16 value turns below (and FirstTurn's v0, v1) are written out for two quads of keys
const_assert V_KEYS == 8u;
// the first turn's keys and values loaded up front (f16 cache, 4 or 8 pairs a lane)
const EARLY_TURN: bool = KV_F16 && (PAIRS_PER_LANE == 4u || PAIRS_PER_LANE == 8u);

fn q_pair(j: u32) -> vec2<f32> {
    return qs[j];
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

// Split `split`'s share of `keys` cached keys: (start, count, last), last being the split's last key
// (a key past it is read as this one, with weight 0).
fn split_keys(split: u32, keys: u32) -> vec3<u32> {
    let chunk = (keys + OLD_SPLITS - 1u) / OLD_SPLITS;
    let start = min(split * chunk, keys);
    let count = min(chunk, keys - start);
    return vec3<u32>(start, count, max(count, 1u) - 1u);
}

// The first turn's key and value words of this invocation (KV_F16: a pair a word) and the state words
// of the alignment row, loaded with the in_proj rows before the kernel's first wait. The cached keys
// are the earlier steps' work, so their loads need only the position: loaded where they are used,
// after the norm, the projection and the scores' maximum, the keys and the values would each add a
// memory latency to the chain.
struct FirstTurn {
    k0: vec4<u32>, k1: vec4<u32>,  // this lane's pairs of its key (k1: the second four, at 8 a lane)
    v0: vec4<u32>, v1: vec4<u32>,  // its pair of the values of keys group + t GROUPS, t < 4 and t >= 4
    voice: u32, text: u32, frames: u32,
}

// Words of the values of keys i, i + GROUPS, i + 2 GROUPS, i + 3 GROUPS (clamped to `last`) at `pair`.
fn value_words4(start: u32, i: u32, last: u32, head: u32, pair: u32) -> vec4<u32> {
    return vec4<u32>(kv[kv_row(start + min(i, last), 1u, head) + pair],
                     kv[kv_row(start + min(i + GROUPS, last), 1u, head) + pair],
                     kv[kv_row(start + min(i + 2u * GROUPS, last), 1u, head) + pair],
                     kv[kv_row(start + min(i + 3u * GROUPS, last), 1u, head) + pair]);
}

fn load_first_turn(ids: Ids, head: u32, split: u32, keys: u32) -> FirstTurn {
    var t: FirstTurn;
    t.voice = state[S_VOICE_ROWS];
    t.text = state[S_TEXT];
    t.frames = state[S_FRAMES];
    if (!EARLY_TURN || split >= OLD_SPLITS) { return t; }
    let range = split_keys(split, keys);
    let krow = kv_row(range.x + min(ids.lid / KEY_LANES, range.z), 0u, head)
        + (ids.lid % KEY_LANES) * PAIRS_PER_LANE;
    t.k0 = vec4<u32>(kv[krow], kv[krow + 1u], kv[krow + 2u], kv[krow + 3u]);
    if (PAIRS_PER_LANE == 8u) {
        t.k1 = vec4<u32>(kv[krow + 4u], kv[krow + 5u], kv[krow + 6u], kv[krow + 7u]);
    }
    let group = ids.lid / PAIRS;
    let pair = ids.lid % PAIRS;
    t.v0 = value_words4(range.x, group, range.z, head, pair);
    t.v1 = value_words4(range.x, group + 4u * GROUPS, range.z, head, pair);
    return t;
}

fn pairs4_dot(w: vec4<u32>, j: u32) -> f32 {
    return dot(unpack2x16float(w.x), q_pair(j)) + dot(unpack2x16float(w.y), q_pair(j + 1u))
        + dot(unpack2x16float(w.z), q_pair(j + 2u)) + dot(unpack2x16float(w.w), q_pair(j + 3u));
}

// The score part of score_part from a key's pairs loaded early (EARLY_TURN).
fn score_part_loaded(first: FirstTurn, key_lane: u32) -> f32 {
    let j = key_lane * PAIRS_PER_LANE;
    var s = pairs4_dot(first.k0, j);
    if (PAIRS_PER_LANE == 8u) { s += pairs4_dot(first.k1, j + 4u); }
    return s;
}

// The values of keys i + t GROUPS (t < 4) from their words, each weighed by its probability (0 past
// `count`).
fn weighed_values4(w: vec4<u32>, i: u32, count: u32, last: u32) -> vec2<f32> {
    var o = select(0.0, scores[min(i, last)], i < count) * unpack2x16float(w.x);
    o += select(0.0, scores[min(i + GROUPS, last)], i + GROUPS < count) * unpack2x16float(w.y);
    o += select(0.0, scores[min(i + 2u * GROUPS, last)], i + 2u * GROUPS < count) * unpack2x16float(w.z);
    o += select(0.0, scores[min(i + 3u * GROUPS, last)], i + 3u * GROUPS < count) * unpack2x16float(w.w);
    return o;
}

fn weighed_value(start: u32, i: u32, count: u32, last: u32, head: u32, pair: u32) -> vec2<f32> {
    let weight = select(0.0, scores[min(i, last)], i < count);
    return weight * kv_pair(kv_row(start + min(i, last), 1u, head), pair);
}

// Part `split` of `head`: keys start..start + count - 1 of the cache (count may be 0: then m is
// -3e38 and the part weighs nothing in the merge).
fn attend(ids: Ids, head: u32, split: u32, keys: u32, first: FirstTurn) {
    let voice = first.voice;
    let text = first.text;
    let align_row = first.frames * params.align_stride;
    let range = split_keys(split, keys);
    let start = range.x;
    let count = range.y;
    let last = range.z;
    let early = EARLY_TURN;  // load_first_turn loaded the first turn

    // Scores: KEY_LANES lanes share each key, KEYS_AT_ONCE keys a turn. The loop has barriers
    // (lanes_sum), so its bound goes through workgroupUniformLoad: WGSL's analysis counts anything
    // derived from the workgroup id as possibly non-uniform.
    let record = params.align != 0u && head == params.align_head;
    let key_lane = ids.lid % KEY_LANES;
    let slot = ids.lid / KEY_LANES;
    if (ids.lid == 0u) { uniform_slot = count; }
    let uniform_count = workgroupUniformLoad(&uniform_slot);  // its barrier also publishes `qs`
    var m = -3.0e38;
    for (var i0 = 0u; i0 < uniform_count; i0 += KEYS_AT_ONCE) {
        let i = i0 + slot;
        let key = start + min(i, last);
        var part = 0.0;
        if (early && i0 == 0u) {
            part = score_part_loaded(first, key_lane);
        } else {
            part = score_part(kv_row(key, 0u, head), key_lane);
        }
        let s = lanes_sum(part, ids, KEY_LANES) * params.scale;
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
    // V_KEYS keys a turn, their loads issued together: a loop that waits for each load pays its
    // latency once per key. Keys past `count` get weight 0 and read the last key again.
    var o = vec2<f32>(0.0, 0.0);
    for (var i = group; i < count; i += V_KEYS * GROUPS) {
        if (early && i == group) {
            o += weighed_values4(first.v0, i, count, last);
            o += weighed_values4(first.v1, i + 4u * GROUPS, count, last);
        } else if (KV_F16) {
            let w0 = value_words4(start, i, last, head, pair);
            let w1 = value_words4(start, i + 4u * GROUPS, last, head, pair);
            o += weighed_values4(w0, i, count, last) + weighed_values4(w1, i + 4u * GROUPS, count, last);
        } else {
            for (var t = 0u; t < V_KEYS; t++) {
                o += weighed_value(start, i + t * GROUPS, count, last, head, pair);
            }
        }
    }
    sums[group * HEAD_DIM + 2u * pair] = o.x;
    sums[group * HEAD_DIM + 2u * pair + 1u] = o.y;
    workgroupBarrier();
    let out = (head * (OLD_SPLITS + 1u) + split) * params.part_stride;
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

@compute @workgroup_size(256)
fn main(ids: Ids) {
    let head = ids.wg.x / ROLES;
    let role = ids.wg.x % ROLES;
    let local_row = ids.lid / LANES;
    let lane = ids.lid % LANES;
    let key_half = role == NEW_KEY || role == NEW_KEY + 1u;
    // Every load that waits on nothing this kernel computes, issued before the first wait: the role
    // rows, the input with its norm weights, the position and the RoPE angles of the pair this
    // invocation rotates (invocations < PAIRS; < HALF / 2 for a half of the new key).
    let a0 = early_share(role, head, 0u, local_row, lane);
    let a1 = early_share(role, head, 1u, local_row, lane);
    let inputs = load_inputs(ids.lid);
    let pos = state[S_POS];
    var j = min(ids.lid, PAIRS - 1u);  // the pair of the head's dimensions
    var i = j;                         // where its q (or v) is among the role rows
    if (key_half) {
        i = min(ids.lid, HALF / 2u - 1u);
        j = (role - NEW_KEY) * (HALF / 2u) + i;
    }
    let angle = vec2<f32>(rope[(pos * PAIRS + j) * 2u], rope[(pos * PAIRS + j) * 2u + 1u]);
    let first = load_first_turn(ids, head, role, pos);
    if (ids.lid == 0u) { uniform_slot = role; }
    if (skip_workgroup(params.gate, ids.lid)) { return; }
    let role_u = workgroupUniformLoad(&uniform_slot);  // `role`, visibly uniform for the barriers below
    if (params.sum_clear != 0u && ids.wg.x == 0u) {
        for (var w = ids.lid; w < 2u * K; w += WG_SIZE) { partials[params.sum_clear - 1u + w] = 0.0; }
    }

    normed_into_xs(ids, inputs);
    workgroupBarrier();
    project(a0, role, head, 0u, ids);
    if (PASSES > 1u) { project(a1, role, head, 1u, ids); }
    workgroupBarrier();

    let out = (head * (OLD_SPLITS + 1u) + OLD_SPLITS) * params.part_stride;
    if (role_u == NEW_VALUE) {
        if (ids.lid < PAIRS) {
            let v = vec2<f32>(rows[2u * j], rows[2u * j + 1u]);
            kv_put(pos, 1u, head * HEAD_DIM + 2u * j, v);
            partials[out + 2u * j] = v.x;
            partials[out + 2u * j + 1u] = v.y;
        }
        return;
    }
    let q = rope_rotate(rows[2u * i], rows[2u * i + 1u], angle);
    if (role_u == NEW_KEY || role_u == NEW_KEY + 1u) {
        let mine = ids.lid < HALF / 2u;
        let k = rope_rotate(rows[HALF + 2u * i], rows[HALF + 2u * i + 1u], angle);
        if (mine) { kv_put(pos, 0u, head * HEAD_DIM + 2u * j, k); }
        let score = workgroup_sum(select(0.0, dot(q, k), mine), ids) * params.scale;
        if (ids.lid == 0u) { partials[out + HEAD_DIM + role_u - NEW_KEY] = score; }
        return;
    }
    if (ids.lid < PAIRS) {
        qs[j] = q;
    }
    attend(ids, head, role_u, pos, first);
}
