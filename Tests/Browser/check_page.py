#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Loads a Lapse report page in headless Chromium (Debian's chromium and chromium-driver, driven by selenium)
and prints what a test asserts, as one JSON object: console errors (failed map-tile loads apart), the video's
readyState and duration, images that did not load (map tiles apart: offline they cannot), the route's and markers' SVG paths, the plot's polylines,
the summary table, and where the page went when a thumbnail was clicked. A screenshot of the page is saved to
argv[2], and one of the video element after the click to argv[3] if given. No host name resolves (the
browser is offline whatever the machine has): map tiles fail to load, as they would without network.

usage: check_page.py PAGE.html SCREENSHOT.png [VIDEO_AFTER_CLICK.png]"""
import json
import pathlib
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

page, shot = sys.argv[1], sys.argv[2]
options = webdriver.ChromeOptions()
for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,2400",
          "--autoplay-policy=no-user-gesture-required", "--host-resolver-rules=MAP * ~NOTFOUND"]:
    options.add_argument(a)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.set_page_load_timeout(60)
try:
    driver.get(pathlib.Path(page).resolve().as_uri())
    js = driver.execute_script
    video = None
    for _ in range(100):
        video = js("const v = document.getElementById('video'); return v ? [v.readyState, v.duration, v.error && v.error.code] : null")
        images = js("return Array.from(document.images).filter(i => !i.classList.contains('leaflet-tile')).map(i => [i.getAttribute('src'), i.complete, i.naturalWidth])")
        if (video is None or video[0] >= 2) and all(c for _, c, _ in images):
            break
        time.sleep(0.1)
    result = {
        "video": None if video is None else {"ready_state": video[0], "duration": video[1], "error": video[2]},
        "images": len(images),
        "broken_images": [s for s, c, w in images if not c or w == 0],
        "route_paths": js("return Array.from(document.querySelectorAll('path.route')).filter(p => (p.getAttribute('d') || '').length > 4).length"),
        "route_statuses": js("return Array.from(document.querySelectorAll('path.route')).map(p => Array.from(p.classList).find(c => c.startsWith('status-')))"),
        "markers": js("return document.querySelectorAll('path.pano-marker').length"),
        "attribution": js("const a = document.querySelector('.leaflet-control-attribution'); return a ? a.textContent : null"),
        "scale_bar": js("return document.querySelectorAll('.leaflet-control-scale-line').length"),
        "no_map": js("const e = document.getElementById('no-map'); return e.hidden ? null : e.textContent"),
        "plot_polylines": js("return Array.from(document.querySelectorAll('#heading-plot polyline, #pitch-plot polyline')).map(p => p.getAttribute('points').trim().split(/\\s+/).length)"),
        "summary": js("const o = {}; for (const td of document.querySelectorAll('#summary td')) o[td.dataset.key] = td.dataset.value; return o"),
        "summary_text": js("const o = {}; for (const td of document.querySelectorAll('#summary td')) o[td.dataset.key] = td.textContent; return o"),
        "thumbnails": js("return document.querySelectorAll('#frames img').length"),
        "subtitle": js("return document.getElementById('subtitle').textContent"),
        "credits": js("return Array.from(document.querySelectorAll('#credits li')).map(li => li.textContent)"),
    }
    driver.save_screenshot(shot)
    strip = driver.find_elements(By.CSS_SELECTOR, "#frames img")
    if strip and video is not None:
        target = strip[len(strip) // 2]
        driver.execute_script("arguments[0].scrollIntoView()", target)
        target.click()
        for _ in range(50):
            seeked = js("const v = document.getElementById('video'); return [v.currentTime, v.seeking, v.readyState]")
            if not seeked[1] and seeked[2] >= 2:
                break
            time.sleep(0.1)
        time.sleep(0.3)
        result["clicked_time"] = float(target.get_attribute("data-time"))
        result["clicked_frame"] = int(target.get_attribute("alt").split()[-1])
        result["video_time_after_click"] = seeked[0]
        if len(sys.argv) > 3:
            driver.execute_script("arguments[0].controls = false; arguments[0].scrollIntoView()", driver.find_element(By.ID, "video"))
            time.sleep(0.3)
            driver.find_element(By.ID, "video").screenshot(sys.argv[3])
    markers = driver.find_elements(By.CSS_SELECTOR, "path.pano-marker")
    if markers:
        marker = markers[len(markers) // 2]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", marker)
        driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", marker)
        popup = None
        for _ in range(50):
            popup = js("const p = document.querySelector('.leaflet-popup-content'); if (!p) return null; "
                       "const i = p.querySelector('img'); return [p.textContent, i ? [i.complete, i.naturalWidth] : null]")
            if popup and (popup[1] is None or popup[1][0]):
                break
            time.sleep(0.1)
        result["popup_text"] = popup[0] if popup else None
        result["popup_image"] = None if not popup or popup[1] is None else popup[1][1] > 0
    # OpenStreetMap tiles the page asked for (as tile images or requests; offline they fail, but were asked for).
    # The heading plot's polylines, each as [[x, y], ...] (its plotting area spans y 12 to 214).
    result["heading_plot"] = js("return Array.from(document.querySelectorAll('#heading-plot polyline')).map(p => "
                                "p.getAttribute('points').trim().split(/\\s+/).map(xy => xy.split(',').map(Number)))")
    result["osm_tiles"] = js("return [...new Set([...document.querySelectorAll('img.leaflet-tile')].map(i => i.src)"
                             ".concat(performance.getEntriesByType('resource').map(e => e.name)))]"
                             ".filter(n => n.includes('tile.openstreetmap.org')).length")
    # Everything the page loaded but map tiles is a local file (relative links only).
    result["remote_resources"] = js("return performance.getEntriesByType('resource').map(e => e.name)"
                                    ".filter(n => !n.startsWith('file:') && !n.includes('tile.openstreetmap.org'))")
    logs = driver.get_log("browser")
    result["console_errors"] = [e["message"] for e in logs if e["level"] == "SEVERE" and "tile.openstreetmap.org" not in e["message"]]
    result["tile_errors"] = sum(1 for e in logs if e["level"] == "SEVERE" and "tile.openstreetmap.org" in e["message"])
    print(json.dumps(result))
finally:
    driver.quit()
