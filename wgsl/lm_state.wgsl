// The language model's state words: mirrors STATE in phonon_web/lm.py (tests/test_lm_kernels.py
// checks that the two agree). The including kernel declares
//     @group(0) @binding(N) var<storage, read_write> state: array<u32>;   (or `read`)
// The step's kernels read it first and return at once when the take is over, so one submit can hold
// many steps; the step's last kernel (step_end.wgsl) moves it on.

const S_POS: u32 = 0u;              // KV position of the row the step's backbone feeds (BOS position + frames)
const S_FRAMES: u32 = 1u;           // frames made so far
const S_END: u32 = 2u;              // frames to keep; 0 until the end of speech (or the budget) decides it
const S_CODEC: u32 = 3u;            // frames the codec has decoded (written by the codec)
const S_BUDGET: u32 = 4u;           // the most frames this text may make
const S_SEED: u32 = 5u;             // noise seed
const S_NOISE_SCALE: u32 = 6u;      // f32 bits: sqrt(temperature)
const S_FRAMES_AFTER_EOS: u32 = 7u; // frames kept after the end-of-speech frame
const S_MIN_FRAMES: u32 = 8u;       // first frame whose end-of-speech logit counts
const S_EOS_THRESHOLD: u32 = 9u;    // f32 bits
const S_DD: u32 = 10u;              // f32 bits: duration_delta * duration_delta_scale
const S_TEXT: u32 = 11u;            // text tokens T
const S_BOS_POS: u32 = 12u;         // KV position of the BOS row: voice rows + T
const S_VOICE_ROWS: u32 = 13u;      // voice rows V
const S_EOS_FRAME: u32 = 14u;       // frame whose logit crossed the threshold; 0xffffffff if none

// Gate modes (a kernel parameter): always run (prefill), run while the take goes on (step), or run
// while it goes on and a frame has been made (the backbone: frame 0's hidden state comes from the prefill).
const GATE_ALWAYS: u32 = 0u;
const GATE_STEP: u32 = 1u;
const GATE_BACKBONE: u32 = 2u;

var<workgroup> gate_flag: u32;

fn take_is_over() -> bool {
    let frames = state[S_FRAMES];
    let end = state[S_END];
    return (end != 0u && frames >= end) || frames >= state[S_BUDGET];
}

// True when this workgroup should return at once. Call from uniform control flow (it has a barrier).
fn skip_workgroup(mode: u32, lid: u32) -> bool {
    if (lid == 0u) {
        var skip = false;
        if (mode != GATE_ALWAYS) {
            skip = take_is_over() || (mode == GATE_BACKBONE && state[S_FRAMES] == 0u);
        }
        gate_flag = select(0u, 1u, skip);
    }
    return workgroupUniformLoad(&gate_flag) != 0u;
}
