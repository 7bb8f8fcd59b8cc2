// Per request, one workgroup: the condition vector for this request's duration_delta, and the BOS
// row of the prefill. It also sets the BOS position (voice rows + T): start's copies set the rest.
//   condition = num_speakers.output_proj(num_speakers.embed[n]) + duration_delta.output_proj(e),
//   e = [cos, sin](dd * scale / max_period ** (i / (half - 1))), i < half
//   BOS row (prefill row T) = input_linear(bos_emb) + condition
// The periods come in the parameters, computed in f32 as the reference does; sin and cos are
// lm_math.wgsl's, so every GPU gives the same vector.
//
// Constants: HIDDEN, HALF (duration embedding half size), SPEAKER_DIM, LATENT.

const WG_SIZE: u32 = 256u;

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

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
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
    for (var r = lid; r < HIDDEN; r += WG_SIZE) {
        var a = 0.0;
        for (var j = 0u; j < SPEAKER_DIM; j++) {
            a += weight_at(params.ns_proj_kind, params.ns_proj_word, params.ns_proj_scales, SPEAKER_DIM, params.ns_proj_padded, r, j) * speaker[j];
        }
        var b = 0.0;
        for (var j = 0u; j < 2u * HALF; j++) {
            b += weight_at(params.dd_kind, params.dd_word, params.dd_scales, 2u * HALF, params.dd_padded, r, j) * embedding[j];
        }
        let c = a + b;
        cond[r] = c;
        var v = 0.0;
        for (var j = 0u; j < LATENT; j++) {
            v += weight_at(params.in_kind, params.in_word, params.in_scales, LATENT, params.in_padded, r, j) * bos[j];
        }
        rows[text * HIDDEN + r] = v + c;
    }
    if (lid == 0u) {
        let bos_pos = state[S_VOICE_ROWS] + text;
        state[S_BOS_POS] = bos_pos;
        state[S_POS] = bos_pos;
    }
}
