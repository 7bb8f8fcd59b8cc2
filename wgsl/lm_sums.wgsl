// Exact sums across workgroups, for a feed-forward block in one dispatch (gemv.wgsl's E_DOWN_SPLIT):
// each of fc1's workgroups adds its share of fc2's output, and the next layer's attention and output
// projection add the sums to the residual they read.
//
// WGSL has no float atomics, so a share v goes in as two integer atomics: a = floor(v * 2^8) (an i32)
// and b = the rest in units of 2^-28 (a u32, at most 2^20 a share, so SUM_MAX_SHARES of them cannot
// overflow it). Integer sums do not depend on the order of the adds: the result, and the audio, are the
// same bits on every run. A sum is kept to 2^-28 (3.7e-9) absolute, up to |sum| < 2^23.
//
// A set of sums over N elements is N words of a, then N words of b: a warp's atomics land on consecutive
// words. (Copies of the sums, workgroup g adding to copy g % 8 or 16 and the readers adding them up,
// made the step slower on the H200: bench/results/h200-ab-feed-forward-2026-12-01.json.)
const SUM_COARSE: f32 = 256.0;    // 2^8: units of a
const SUM_FINE: f32 = 1048576.0;  // 2^20: units of b in one unit of a

fn sum_share(v: f32) -> vec2<u32> {
    let s = v * SUM_COARSE;
    let a = floor(s);
    return vec2<u32>(bitcast<u32>(i32(a)), u32(round((s - a) * SUM_FINE)));
}

// A sum's value from its words; b's whole units of a join a as integers (a float of b could lose its
// low bits).
fn sum_value(words: vec2<u32>) -> f32 {
    let whole = bitcast<i32>(words.x) + i32(words.y >> 20u);
    return (f32(whole) + f32(words.y & 0xfffffu) / SUM_FINE) / SUM_COARSE;
}
