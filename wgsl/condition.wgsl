// Per request: the condition vector for this request's duration_delta, and the BOS row of the
// prefill, ROWS_PER_GROUP rows a workgroup and LANES lanes a row (a row's 176 products at the real
// sizes, loaded one after another by one invocation, made this kernel 73 us of the H200's prefill).
// Workgroup 0 also sets the BOS position (voice rows + T): start's copies set the rest.
//   condition = num_speakers.output_proj(num_speakers.embed[n]) + duration_delta.output_proj(e),
//   e = [cos, sin](dd * scale / max_period ** (i / (half - 1))), i < half
//   BOS row (prefill row T) = input_linear(bos_emb) + condition
// The periods come in the parameters, computed in f32 as the reference does; sin and cos are
// lm_math.wgsl's, so every GPU gives the same vector.
//
// Constants: HIDDEN, HALF (duration embedding half size), SPEAKER_DIM, LATENT, ROWS_PER_GROUP.

const WG_SIZE: u32 = 256u;
const LANES: u32 = WG_SIZE / ROWS_PER_GROUP;  // ROWS_PER_GROUP: a constant (lm_ops.CONDITION_ROWS)

struct Params {
    speakers: u32, ns_embed_kind: u32, ns_embed_word: u32, _pad0: u32,
    ns_proj_kind: u32, ns_proj_word: u32, ns_proj_scales: u32, ns_proj_padded: u32,
    dd_kind: u32, dd_word: u32, dd_scales: u32, dd_padded: u32,
    in_kind: u32, in_word: u32, in_scales: u32, in_padded: u32,
    bos_kind: u32, bos_word: u32, _pad1: u32, _pad2: u32,
    periods: array<vec4<f32>, HALF / 4u>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: array<u32>;
@group(0) @binding(3) var<storage, read_write> cond: array<f32>;
@group(0) @binding(4) var<storage, read_write> rows: array<f32>;  // the prefill's input rows

var<workgroup> embedding: array<f32, 2u * HALF>;
var<workgroup> speaker: array<f32, SPEAKER_DIM>;
var<workgroup> bos: array<f32, LATENT>;
var<workgroup> cond_parts: array<f32, WG_SIZE>;
var<workgroup> bos_parts: array<f32, WG_SIZE>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    let dd = bitcast<f32>(state[S_DD]);
    if (lid < HALF) {
        let sc = sincos(dd / params.periods[lid / 4u][lid % 4u]);
        embedding[lid] = sc.y;
        embedding[HALF + lid] = sc.x;
    }
    if (lid < SPEAKER_DIM) {
        speaker[lid] = weight_at(params.ns_embed_kind, params.ns_embed_word, 0u, SPEAKER_DIM, SPEAKER_DIM, params.speakers, lid);
    }
    if (lid < LATENT) { bos[lid] = vector_at(params.bos_kind, params.bos_word, lid); }
    workgroupBarrier();
    let text = state[S_TEXT];
    let r = wg.x * ROWS_PER_GROUP + lid / LANES;
    let lane = lid % LANES;
    let row = min(r, HIDDEN - 1u);
    var c = 0.0;
    for (var j = lane; j < SPEAKER_DIM; j += LANES) {
        c += weight_at(params.ns_proj_kind, params.ns_proj_word, params.ns_proj_scales, SPEAKER_DIM, params.ns_proj_padded, row, j) * speaker[j];
    }
    var b = 0.0;
    for (var j = lane; j < 2u * HALF; j += LANES) {
        b += weight_at(params.dd_kind, params.dd_word, params.dd_scales, 2u * HALF, params.dd_padded, row, j) * embedding[j];
    }
    var v = 0.0;
    for (var j = lane; j < LATENT; j += LANES) {
        v += weight_at(params.in_kind, params.in_word, params.in_scales, LATENT, params.in_padded, row, j) * bos[j];
    }
    cond_parts[lid] = c + b;
    bos_parts[lid] = v;
    workgroupBarrier();
    if (lane == 0u && r < HIDDEN) {
        var total_c = 0.0;
        var total_v = 0.0;
        for (var l = 0u; l < LANES; l++) {
            total_c += cond_parts[lid + l];
            total_v += bos_parts[lid + l];
        }
        cond[r] = total_c;
        rows[text * HIDDEN + r] = total_v + total_c;
    }
    if (wg.x == 0u && lid == 0u) {
        let bos_pos = state[S_VOICE_ROWS] + text;
        state[S_BOS_POS] = bos_pos;
        state[S_POS] = bos_pos;
    }
}
