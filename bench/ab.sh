#!/usr/bin/env bash
# A/B of engine versions on one lent GPU machine, runs alternated so that the machine's drift and its
# differences from call to call fall on every version alike (how bench/results/h200-ab-*.json were made).
#
#   bash bench/ab.sh prepare NAME=REV [NAME=REV ...]   here: REV's phonon_web/ and wgsl/ into build/ab/NAME
#   bash bench/ab.sh run [codec] [profile] [speed]       on the device, with carry .gl, .whl and build/ab
#
# `run` installs what bench/h200.sh installs (bench/device_env.sh), makes the synthetic model, warms
# the GPU up for a few seconds (a cold H200 drifts for minutes: a probe without a warm-up once read 3.9
# ms for a 0.8 ms codec chunk), then for rounds 1 and 2 runs each prepared version in turn, its files
# copied over the tree: `codec` bench/codec_costs.py (codec chunks as whole passes), `profile`
# bench/gpu_profile.py --repeat 3, `speed` bench/speed.py --rounds 1. Every result lands in $OUT/ab.tgz
# (the lent machine returns few files) and one line per run is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true
case $mode in
    prepare)
        [ $# -ge 2 ] || { echo "prepare wants two versions or more: NAME=REV ..." >&2; exit 2; }
        rm -rf build/ab
        for pair in "$@"; do
            name=${pair%%=*}
            rev=${pair#*=}
            mkdir -p "build/ab/$name"
            git archive "$rev" phonon_web wgsl | tar -x -C "build/ab/$name"
            echo "build/ab/$name: $(git rev-parse --short "$rev")"
        done
        ;;
    run)
        [ -d build/ab ] || { echo "no build/ab: run 'bash bench/ab.sh prepare' here first" >&2; exit 2; }
        runs=${*:-codec speed}
        . bench/device_env.sh
        out=${OUT:-build}/ab
        mkdir -p "$out"
        python3 -c "import bench.speed as s; s.synthetic_weights(__import__('pathlib').Path('build/bench'))"
        python3 bench/gpu_profile.py --repeat 2 > /dev/null  # warm-up
        # the tree's own engine, put back after the runs (git cannot: the lent machine's copy of the
        # repository may hold an older commit than the files sent with it)
        rm -rf build/ab-tree && mkdir -p build/ab-tree && cp -r phonon_web wgsl build/ab-tree/
        for round in 1 2; do
            for dir in build/ab/*/; do
                v=$(basename "$dir")
                rm -rf phonon_web wgsl
                cp -r "$dir/phonon_web" "$dir/wgsl" .
                for run in $runs; do
                    file="$out/$v-$round-$run.json"
                    case $run in
                        codec) python3 bench/codec_costs.py --loop-tiles 128 --rounds 1 --out "$file" > /dev/null
                            python3 -c "import json; d = json.load(open('$file'))
print('$v #$round codec pass us', {c: t[0] for c, t in d['pass_us']['128'].items()})" ;;
                        profile) python3 bench/gpu_profile.py --repeat 3 --out "$file" > /dev/null
                            python3 -c "import json; d = json.load(open('$file'))['in one pass']
print('$v #$round in-pass step', d['step_us'], 'prefill', d['prefill_us'], 'codec 16', d['codec_chunk_16_us'])" ;;
                        speed) python3 bench/speed.py --rounds 1 --out "$file" > /dev/null
                            python3 -c "import json; e = json.load(open('$file'))['engine']
print('$v #$round speed', round(e['speed_total_x'], 1), 'first audio', round(e['first_audio_ms']['median'], 2),
      'step gpu', round(e['step']['step_gpu_us'], 1))" ;;
                        *) echo "unknown run $run" >&2; exit 2 ;;
                    esac
                done
            done
        done
        rm -rf phonon_web wgsl && cp -r build/ab-tree/phonon_web build/ab-tree/wgsl . && rm -rf build/ab-tree
        (cd "$out/.." && tar czf ab.tgz ab)
        if [ -n "${OUT:-}" ]; then rm -rf "$out"; fi  # the lent machine returns few files: the tarball alone
        ;;
    *)
        echo "usage: bash bench/ab.sh prepare NAME=REV NAME=REV ... | run [codec] [profile] [speed]" >&2
        exit 2
        ;;
esac
