// The codec transformer's causal attention over a sliding window, reading keys and values from a ring.
//
// A query at position q (rows_per_frame * start + m) sees the keys at positions k with
// 0 <= q - k < window (Transformers' sliding-window mask: 250 keys, itself included). Keys and values
// live in `ring` at slot position % ring_size, written there (keys already rotated) by the QKV
// product's epilogue, so positions continue across chunks and the ring never moves. ring_size must be
// at least window + the rows of the largest chunk.
//
// One workgroup of 256 threads per ROWS consecutive rows and a head. The kernel's cost is its reads of
// the ring (a row and head read the whole window: 128 KB, 256 MB a chunk of 16 frames at one row a
// workgroup), so the ROWS rows share every key and value they load: their windows together span
// window + ROWS - 1 keys (KEYS_MAX or fewer), each thread scores KEYS_MAX / 256 of them for every row
// (a vec4 a key, one component a row), fixed-shape trees find each row's maximum and sum, and 16 groups
// of 16 lanes add up the values of every 16th key, 4 dimensions a lane, before the groups' sums are
// added in order. Row groups start at positions that are multiples of ROWS (ROWS divides
// rows_per_frame, and a chunk starts at a frame), and every step depends only on the group's first
// position, so a row's output is the same whichever chunk holds it.
// Both passes load four key (or value) rows before the first use of any: a load's first use stalls
// every later load, so a loop that loads and uses one row a turn pays one memory latency per turn.
// (Loading a key's whole head row at once was slower on the H200, as was a flash-style kernel of 16
// rows a workgroup with no more workgroups than 16-row tiles and heads.)

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
// ROWS: rows a workgroup (1, 2 or 4; a constant), one component of the vec4s below each

var<workgroup> query: array<vec4<f32>, 16u * ROWS>;
var<workgroup> scores: array<vec4<f32>, KEYS_MAX>;
var<workgroup> partial: array<vec4<f32>, 256>;  // the trees' values, then the value groups' sums

// Reduce `partial` (256 vec4s) to partial[0] with max (is_max) or +, in a fixed tree.
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

// Where key u's value (u from the group's first key) has this lane's four dimensions.
fn value_at(first: u32, u: u32, column: u32, lane: u32) -> u32 {
    return (p.ring_v + ((first + u) % p.ring_size) * p.hidden + column) / 4u + lane;
}

fn query_dot(r: u32, d: u32, k: vec4<f32>) -> f32 {
    return dot(query[r * HD4 + d], k);
}

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let start = chunk_start();
    if (past_end(start)) {
        return;
    }
    let m0 = wg.x * ROWS;  // the group's first row in the chunk
    let head = wg.y;
    if (m0 >= p.rows) {
        return;
    }
    let column = head * HEAD_DIM;
    let pos0 = p.rows_per_frame * start + m0;
    let first = select(0u, pos0 + 1u - p.window, pos0 + 1u > p.window);  // the group's first key
    let count = pos0 + ROWS - first;  // keys first .. pos0 + ROWS - 1
    // row r sees keys lo[r] ..= hi[r] (counted from `first`)
    var lo = vec4<u32>(0u);
    var hi = vec4<u32>(0u);
    for (var r = 0u; r < ROWS; r++) {
        let pos = pos0 + r;
        lo[r] = select(0u, pos + 1u - p.window, pos + 1u > p.window) - first;
        hi[r] = pos - first;
    }

    if (lid < ROWS * HD4) {
        let at = (m0 + lid / HD4) * p.hidden + column + 4u * (lid % HD4);
        query[lid] = vec4<f32>(q[at], q[at + 1u], q[at + 2u], q[at + 3u]);
    }
    workgroupBarrier();

    var best = vec4<f32>(-3.0e38);
    for (var c = 0u; c < PER_THREAD; c++) {
        let u = lid + 256u * c;
        var s = vec4<f32>(-3.0e38);
        if (u < count) {
            let base = (p.ring_k + ((first + u) % p.ring_size) * p.hidden + column) / 4u;
            var dot_qk = vec4<f32>(0.0);
            for (var d = 0u; d < HD4; d += 4u) {
                let k0 = ring[base + d];
                let k1 = ring[base + min(d + 1u, HD4 - 1u)];
                let k2 = ring[base + min(d + 2u, HD4 - 1u)];
                let k3 = ring[base + min(d + 3u, HD4 - 1u)];
                for (var r = 0u; r < ROWS; r++) {
                    dot_qk[r] += query_dot(r, d, k0);
                    if (d + 1u < HD4) {
                        dot_qk[r] += query_dot(r, d + 1u, k1);
                    }
                    if (d + 2u < HD4) {
                        dot_qk[r] += query_dot(r, d + 2u, k2);
                    }
                    if (d + 3u < HD4) {
                        dot_qk[r] += query_dot(r, d + 3u, k3);
                    }
                }
            }
            for (var r = 0u; r < ROWS; r++) {
                if (u >= lo[r] && u <= hi[r]) {
                    s[r] = dot_qk[r] * p.scale;
                }
            }
        }
        scores[u] = s;
        best = max(best, s);
    }
    partial[lid] = best;
    tree(lid, true);
    let top = partial[0];
    workgroupBarrier();

    var sum = vec4<f32>(0.0);
    for (var c = 0u; c < PER_THREAD; c++) {
        let u = lid + 256u * c;
        var e = vec4<f32>(0.0);
        for (var r = 0u; r < ROWS; r++) {
            if (u >= lo[r] && u <= hi[r]) {
                e[r] = exp(scores[u][r] - top[r]);
            }
        }
        scores[u] = e;
        sum += e;
    }
    partial[lid] = sum;
    tree(lid, false);
    let total = partial[0];
    workgroupBarrier();

    // values: 16 groups of 16 lanes, a lane per 4 dimensions; group g adds keys g, g + 16, ...
    let group = lid / 16u;
    let lane = lid % 16u;
    var acc: array<vec4<f32>, ROWS>;
    if (lane < HD4) {
        for (var u = group; u < count; u += 64u) {
            let v0 = ring[value_at(first, u, column, lane)];
            let v1 = ring[value_at(first, min(u + 16u, count - 1u), column, lane)];
            let v2 = ring[value_at(first, min(u + 32u, count - 1u), column, lane)];
            let v3 = ring[value_at(first, min(u + 48u, count - 1u), column, lane)];
            let w0 = scores[u];
            let w1 = select(vec4<f32>(0.0), scores[min(u + 16u, count - 1u)], u + 16u < count);
            let w2 = select(vec4<f32>(0.0), scores[min(u + 32u, count - 1u)], u + 32u < count);
            let w3 = select(vec4<f32>(0.0), scores[min(u + 48u, count - 1u)], u + 48u < count);
            for (var r = 0u; r < ROWS; r++) {
                acc[r] += w0[r] * v0 + w1[r] * v1 + w2[r] * v2 + w3[r] * v3;
            }
        }
    }
    for (var r = 0u; r < ROWS; r++) {
        partial[lid] = acc[r];  // `partial` is free: the sums' tree was read before the last barrier
        workgroupBarrier();
        if (lid < HD4) {
            var value = partial[lid];
            for (var g = 1u; g < 16u; g++) {
                value += partial[g * 16u + lid];
            }
            value /= total[r];
            let at = (m0 + r) * p.hidden + column + 4u * lid;
            out[at] = value.x;
            out[at + 1u] = value.y;
            out[at + 2u] = value.z;
            out[at + 3u] = value.w;
        }
        workgroupBarrier();
    }
}
