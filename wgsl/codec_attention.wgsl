// The codec transformer's causal attention over a sliding window, reading keys and values from a ring.
//
// A query at position q (rows_per_frame * start + m) sees the keys at positions k with
// 0 <= q - k < window (Transformers' sliding-window mask: 250 keys, itself included). Keys and values
// live in `ring` at slot position % ring_size, written there (keys already rotated) by the QKV
// product's epilogue, so positions continue across chunks and the ring never moves. ring_size must be
// at least window + the rows of the largest chunk.
//
// One workgroup of 256 threads per (row, head): each thread scores KEYS_MAX / 256 keys (a key read as
// whole vec4s), fixed-shape trees find the maximum and the sum, and 16 groups of 16 lanes add up the
// values of every 16th key, 4 dimensions a lane, before the groups' sums are added in order. Every step
// depends only on the query's own position, so a row's output is the same whichever chunk holds it.
// Both passes load four key (or value) rows before the first use of any: a load's first use stalls
// every later load, so a loop that loads and uses one row a turn pays one memory latency per turn.

struct Params {
    rows: u32,
    hidden: u32,
    window: u32,
    ring_size: u32,
    ring_k: u32,
    ring_v: u32,
    rows_per_frame: u32,
    scale: f32,
    frame_word: u32,
    end_word: u32,
    avail_word: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> ring: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<storage, read> state: array<u32>;

const PER_THREAD: u32 = KEYS_MAX / 256u;
const HD4: u32 = HEAD_DIM / 4u;  // vec4s of a head (HEAD_DIM: a constant, 4 to 64, a multiple of 4)

var<workgroup> query: array<vec4<f32>, 16>;
var<workgroup> scores: array<f32, KEYS_MAX>;
var<workgroup> partial: array<f32, 256>;
var<workgroup> sums: array<vec4<f32>, 256>;

// Reduce `partial` (256 values) to partial[0] with max (is_max) or +, in a fixed tree.
fn tree(lid: u32, is_max: bool) {
    for (var half = 128u; half > 0u; half /= 2u) {
        workgroupBarrier();
        if (lid < half) {
            let a = partial[lid];
            let b = partial[lid + half];
            partial[lid] = select(a + b, max(a, b), is_max);
        }
    }
    workgroupBarrier();
}

// Where key j's value (j from the window's first position) has this lane's four dimensions.
fn value_at(first: u32, j: u32, column: u32, lane: u32) -> u32 {
    return (p.ring_v + ((first + j) % p.ring_size) * p.hidden + column) / 4u + lane;
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }
    let m = wg.x;
    let head = wg.y;
    if (m >= p.rows) {
        return;
    }
    let column = head * HEAD_DIM;
    let pos = p.rows_per_frame * start + m;
    let first = select(0u, pos + 1u - p.window, pos + 1u > p.window);
    let count = pos + 1u - first;

    if (lid < HD4) {
        let at = m * p.hidden + column + 4u * lid;
        query[lid] = vec4<f32>(q[at], q[at + 1u], q[at + 2u], q[at + 3u]);
    }
    workgroupBarrier();

    var best = -3.0e38;
    for (var c = 0u; c < PER_THREAD; c++) {
        let j = lid + 256u * c;
        var s = -3.0e38;
        if (j < count) {
            let base = (p.ring_k + ((first + j) % p.ring_size) * p.hidden + column) / 4u;
            var dot_qk = 0.0;
            for (var d = 0u; d < HD4; d += 4u) {
                let k0 = ring[base + d];
                let k1 = ring[base + min(d + 1u, HD4 - 1u)];
                let k2 = ring[base + min(d + 2u, HD4 - 1u)];
                let k3 = ring[base + min(d + 3u, HD4 - 1u)];
                dot_qk += dot(query[d], k0);
                if (d + 1u < HD4) {
                    dot_qk += dot(query[d + 1u], k1);
                }
                if (d + 2u < HD4) {
                    dot_qk += dot(query[d + 2u], k2);
                }
                if (d + 3u < HD4) {
                    dot_qk += dot(query[d + 3u], k3);
                }
            }
            s = dot_qk * p.scale;
        }
        scores[j] = s;
        best = max(best, s);
    }
    partial[lid] = best;
    tree(lid, true);
    let top = partial[0];
    workgroupBarrier();

    var sum = 0.0;
    for (var c = 0u; c < PER_THREAD; c++) {
        let j = lid + 256u * c;
        var e = 0.0;
        if (j < count) {
            e = exp(scores[j] - top);
        }
        scores[j] = e;
        sum += e;
    }
    partial[lid] = sum;
    tree(lid, false);
    let total = partial[0];
    workgroupBarrier();

    // values: 16 groups of 16 lanes, a lane per 4 dimensions; group g adds keys g, g + 16, ...
    let group = lid / 16u;
    let lane = lid % 16u;
    var acc = vec4<f32>(0.0);
    if (lane < HD4) {
        for (var j = group; j < count; j += 64u) {
            let v0 = ring[value_at(first, min(j, count - 1u), column, lane)];
            let v1 = ring[value_at(first, min(j + 16u, count - 1u), column, lane)];
            let v2 = ring[value_at(first, min(j + 32u, count - 1u), column, lane)];
            let v3 = ring[value_at(first, min(j + 48u, count - 1u), column, lane)];
            acc += scores[j] * v0;
            if (j + 16u < count) {
                acc += scores[j + 16u] * v1;
            }
            if (j + 32u < count) {
                acc += scores[j + 32u] * v2;
            }
            if (j + 48u < count) {
                acc += scores[j + 48u] * v3;
            }
        }
    }
    sums[lid] = acc;
    workgroupBarrier();
    if (lid < HD4) {
        var value = sums[lid];
        for (var g = 1u; g < 16u; g++) {
            value += sums[g * 16u + lid];
        }
        value /= total;
        let at = m * p.hidden + column + 4u * lid;
        out[at] = value.x;
        out[at + 1u] = value.y;
        out[at + 2u] = value.z;
        out[at + 3u] = value.w;
    }
}
