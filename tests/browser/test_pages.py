"""The pages: the demo, the classic script tag, and the typed error of a browser without WebGPU.

Screenshots go to build/screenshots/ (desktop and phone widths)."""

import struct

import pytest

from .conftest import ROOT, close, launch, open_page, weights_requests

SHOTS = ROOT / "build" / "screenshots"


@pytest.fixture(scope="module")
def shots():
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def test_script_tag_page_loads_from_the_cache_without_network(loaded, context, server):
    before = len(server.requests)
    page = open_page(context, server.url + "examples/script-tag.html")
    page.wait_for_function("() => window.tts || window.loadError")
    assert page.evaluate("() => window.loadError ?? null") is None
    assert page.evaluate("() => typeof window.Phonon.PhononError") == "function"  # the module's members
    info = page.evaluate("() => window.tts.info")
    assert info["voices"] == ["Delia", "Iris", "Marcus"]
    assert info["fromCache"] == {"manifest": True, "files": 5, "downloaded": 0, "repaired": 0}
    assert weights_requests(server.requests[before:]) == []  # not even the manifest
    assert page.locator("#status").inner_text().startswith("ready")
    samples = page.evaluate(
        "async () => (await window.tts.speak('Hi there.', { maxFrames: 2 })).audio.length"
    )
    assert samples == 2 * 1920
    page.evaluate("() => window.tts.close()")
    page.close()


def test_demo_speaks_highlights_and_downloads(loaded, context, server, shots):
    log = []
    page = open_page(context, server.url + "?maxFrames=6", log)
    page.wait_for_function("() => document.getElementById('load-label').textContent.startsWith('Preparing')")
    assert page.locator("#load-progress").evaluate("(p) => p.value") == 1  # every byte there (from the cache)
    page.screenshot(path=str(shots / "demo-loading.png"), full_page=True)
    page.wait_for_selector("body[data-state=ready]")
    assert page.locator("#loading").is_hidden()
    options = page.locator("#preset option").all_inner_texts()
    assert len(options) == 12 and options[1].startswith("The birch canoe")  # 11 phrases + the prompt
    assert page.locator("#voice option").all_inner_texts() == ["Delia", "Iris", "Marcus"]
    assert (
        page.locator("#speed").get_attribute("min") == "0.77"
        and page.locator("#speed").get_attribute("max") == "1.3"
    )

    page.select_option("#preset", index=2)
    page.select_option("#voice", "Marcus")
    page.locator("#speed").fill("1.1")
    assert page.locator("#speed-value").inner_text() == "1.10×"
    page.click("#play")
    page.wait_for_selector("body[data-state=done]")
    words = page.locator("#transcript .word").all_inner_texts()
    assert words == "Glue the sheet to the dark blue background.".split()
    assert page.locator("#transcript .word.spoken").count() >= 1  # played through, lit in time
    assert "real time" in page.locator("#stat-rtf").inner_text()
    assert page.locator("#stat-first").inner_text().endswith("ms")
    assert page.locator("#stat-duration").inner_text() == "0.48 s"  # 6 frames of 80 ms
    page.screenshot(path=str(shots / "demo-desktop.png"), full_page=True)

    with page.expect_download() as download:
        page.click("#download")
    data = open(download.value.path(), "rb").read()
    assert data[:4] == b"RIFF" and data[8:16] == b"WAVEfmt "
    assert struct.unpack("<I", data[24:28])[0] == 24000
    assert len(data) == 44 + 2 * 6 * 1920

    # the transcript is the text as written: "$5.20" lights up as one word, spoken as five words
    page.fill("#text", "It cost $5.20 on 3/4.")
    page.click("#play")
    page.wait_for_selector("body[data-state=done]")
    assert page.locator("#transcript .word").all_inner_texts() == ["It", "cost", "$5.20", "on", "3/4."]
    assert page.locator("#transcript").inner_text().strip() == "It cost $5.20 on 3/4."
    page.screenshot(path=str(shots / "demo-written-text.png"), full_page=True)

    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(shots / "demo-phone.png"), full_page=True)
    assert not [line for line in log if line.startswith("pageerror")], log
    # all of it under the strict Content-Security-Policy the session's server sends (web/README.md)
    assert page.evaluate("async () => (await fetch('demo.js')).headers.get('content-security-policy')")
    assert not [line for line in log if "Content Security Policy" in line], log
    page.evaluate("() => window.tts.close()")
    page.close()


def test_no_webgpu_is_a_typed_error_in_plain_words(playwright, server, shots):
    context = launch(playwright, webgpu=False)
    try:
        page = open_page(context, server.url)
        page.wait_for_selector("body[data-state=failed]")
        assert page.locator("#failure-title").inner_text() == "This browser has no WebGPU"
        page.screenshot(path=str(shots / "demo-no-webgpu.png"), full_page=True)
        error = page.evaluate(
            """async () => {
                const { Phonon } = await import("./phonon.mjs");
                return Phonon.load({}).then(() => null, (e) => ({
                    name: e.name, message: e.message, typed: e instanceof Phonon.PhononError }));
            }"""
        )
        assert error["name"] == "NoWebGPUError" and error["typed"]
        assert "no WebGPU" in error["message"] and "Chrome" in error["message"]
        assert "requestAdapter" in error["message"]  # Chromium without the flag has navigator.gpu, no adapter

        # a browser with no navigator.gpu at all, through the classic script
        page = context.new_page()
        page.add_init_script("Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined })")
        page.goto(server.url + "examples/script-tag.html")
        page.wait_for_function("() => window.loadError")
        error = page.evaluate("() => ({ name: window.loadError.name, message: window.loadError.message })")
        assert error["name"] == "NoWebGPUError" and "navigator.gpu is missing" in error["message"]
        assert page.locator("#status").inner_text().startswith("NoWebGPUError: This browser has no WebGPU")
    finally:
        close(context)
