#!/usr/bin/env bash
# The H200 runs behind bench/results/h200-*.json, as one command on the lent machine (a bare image with
# the NVIDIA driver and Python 3.12 + torch, nothing else): libvulkan1 and friends as .deb files in
# .gl/, and wgpu, cffi, pycparser, rendercanvas and transformers as wheels in .whl/ (see the device
# notes). Each argument names a run: costs, profile, breakdown, speed, reference, parity, encode, codec,
# ablation
# (all but costs, the dispatch and GEMV probes, need the synthetic model, which is built first).
#     bash bench/h200.sh profile breakdown speed
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/device_env.sh
out=${OUT:-bench/results}
day=$(date +%Y-%m-%d)
for run in "$@"; do
    if [ "$run" != costs ]; then
        python3 -c "import bench.speed as s; s.synthetic_weights(__import__('pathlib').Path('build/bench'))"
        break
    fi
done
for run in "$@"; do
    echo "== $run"
    case $run in
        costs) python3 bench/dispatch_costs.py --out "$out/h200-dispatch-costs-$day.json"
            python3 bench/gemv_costs.py --out "$out/h200-gemv-costs-$day.json" ;;
        profile) python3 bench/gpu_profile.py --out "$out/h200-profile-$day.json" | tail -n 40 ;;
        breakdown) python3 bench/breakdown.py --out "$out/h200-breakdown-$day.json" | tail -n 60 ;;
        speed) python3 bench/speed.py --rounds 3 --out "$out/h200-speed-$day.json" | tail -n 30 ;;
        reference) python3 bench/speed.py --rounds 3 --reference --out "$out/h200-speed-$day.json" | tail -n 30 ;;
        parity) python3 bench/parity.py --out "$out/h200-parity-$day.json" | tail -n 30 ;;
        encode) python3 bench/encode_costs.py --out "$out/h200-encode-costs-$day.json" | head -n 12 ;;
        ablation) python3 bench/ablation.py --from-frame 1 300 650 --out "$out/h200-ablation-$day.json" 2>&1 \
            | grep "us a pass" ;;
        codec) python3 bench/codec_costs.py --chunks 1 16 32 --loop-tiles 128 never \
            --out "$out/h200-codec-costs-$day.json" | tail -n 30 ;;
        *) echo "unknown run $run" >&2; exit 2 ;;
    esac
done
