// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseMedia

/// A hyperlapse's report: one HTML page with the route on a map coloured by coverage, a marker per panorama,
/// the video and GIF, a strip of frame thumbnails (a click seeks the video there), a plot of the camera's heading
/// (and pitch, fov) against the panoramas' own headings, the summary and the credits.
///
/// The page works from `file://` with no network: Leaflet (Debian's `libjs-leaflet`) is inlined, the route and
/// markers are vector layers that draw on a plain background with a scale bar; only the OpenStreetMap raster
/// tiles behind them come from the network (with their attribution), and none for a route from Google Maps Platform
/// (``HyperlapseReport/Basemap/none``, credited on the map instead). Everything else is beside the page, by
/// relative links: the video, the GIF, and the thumbnails in `PAGE_files/`. The numbers shown are the summary
/// given (``summaryJSON``: what `--json` prints), read by the page's script.
public struct ReportPage: Sendable {
    /// Where Debian's `libjs-leaflet` puts Leaflet.
    public static let debianLeaflet = URL(fileURLWithPath: "/usr/share/javascript/leaflet", isDirectory: true)

    /// The page's title.
    public var title: String
    /// The points, panoramas and frames the page shows.
    public var report: HyperlapseReport
    /// The summary as `--json` prints it (a JSON object); shown as a table.
    public var summaryJSON: Data
    /// The MP4 and GIF made (paths), if any: linked, and the thumbnails are taken from the MP4.
    public var video: URL?
    /// The GIF made (path), if any: linked.
    public var gif: URL?
    /// Credit lines (imagery and route), one per line.
    public var credits: [String]
    /// A folder holding `leaflet.min.js` (or `leaflet.js`) and `leaflet.css`.
    public var leafletDirectory = Self.debianLeaflet
    /// At most this many thumbnails (every n-th frame beyond that).
    public var maxThumbnails = 240
    /// Thumbnail width in pixels (height keeps the video's aspect ratio).
    public var thumbnailWidth = 160

    /// A page of `report` with the given title, summary JSON, outputs and credits (see the properties).
    public init(
        title: String, report: HyperlapseReport, summaryJSON: Data, video: URL? = nil, gif: URL? = nil,
        credits: [String] = []
    ) {
        self.title = title
        self.report = report
        self.summaryJSON = summaryJSON
        self.video = video
        self.gif = gif
        self.credits = credits
    }

    /// What ``write(to:overwrite:)`` wrote.
    public struct Written: Sendable, Equatable {
        /// The page.
        public var page: URL
        /// The thumbnails' folder (`PAGE_files`, beside the page; nil when there are none: no folder is made)
        /// and how many it holds.
        public var filesDirectory: URL?
        /// Thumbnails written in ``filesDirectory``.
        public var thumbnails: Int
    }

    /// The thumbnails' folder of a page: `PAGE_files` beside it (`report.html` → `report_files`).
    public static func filesDirectory(of page: URL) -> URL {
        URL(fileURLWithPath: filesDirectory(of: page.filePath), isDirectory: true)
    }

    static func filesDirectory(of page: String) -> String {
        (page as NSString).deletingPathExtension + "_files"
    }

    /// Checks that the page can be written, writing nothing: an `.html` name, its folder, nothing in the way
    /// without `overwrite`, the page not one of `inputs` (the files the job reads or writes: the video, the
    /// photos' folder, the cache), none of them inside its files folder, a files folder already there holding
    /// only a report's thumbnails (it is replaced), and Leaflet in `leafletDirectory`.
    /// - Throws: ``LapseError`` `.usage` for another extension or an input inside the files folder, `.output`
    ///   when something is in the way, `.notFound` when Leaflet is missing.
    public static func checkOutput(
        _ page: URL, overwrite: Bool, inputs: [URL] = [],
        leafletDirectory: URL = debianLeaflet
    ) throws {
        try checkPaths(page.filePath, overwrite: overwrite, inputs: inputs.filter(\.isFileURL).map(\.filePath))
        _ = try leaflet(in: leafletDirectory.filePath)
    }

    /// ``checkOutput(_:overwrite:inputs:leafletDirectory:)`` but for Leaflet.
    static func checkPaths(_ page: String, overwrite: Bool, inputs: [String]) throws {
        let ext = (page as NSString).pathExtension.lowercased()
        guard ext == "html" || ext == "htm" else {
            throw LapseError.usage("\(page): the report must end in .html or .htm")
        }
        try AtomicOutput(
            url: URL(fileURLWithPath: page), overwrite: overwrite, inputs: inputs.map { URL(fileURLWithPath: $0) }
        ).discard()
        let files = filesDirectory(of: page)
        let inside = resolved(files) + "/"
        if let input = inputs.first(where: { resolved($0) + "/" == inside || resolved($0).hasPrefix(inside) }) {
            throw LapseError.usage(
                "\(input) is in \(files), the report's thumbnail folder: give the report another name")
        }
        if FileManager.default.fileExists(atPath: files) {
            guard overwrite else { throw LapseError(.output, files, "exists (use `overwrite` to replace it)") }
            try checkReplaceable(files)
        }
    }

    /// A files folder may be replaced only when it holds a report's thumbnails and nothing else.
    static func checkReplaceable(_ files: String) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: files)) ?? ["?"]
        guard names.allSatisfy({ $0.hasPrefix("frame-") && $0.hasSuffix(".jpg") }) else {
            throw LapseError(.output, files, "holds other files than a report's thumbnails: not replaced")
        }
    }

    /// `path` made absolute, with its folder's symbolic links resolved.
    static func resolved(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let url = URL(fileURLWithPath: absolute).standardizedFileURL
        return url.deletingLastPathComponent().resolvingSymlinksInPath().appendingPathComponent(url.lastPathComponent)
            .path
    }

    /// Writes the page and its thumbnails (to a temporary folder and file, renamed into place).
    /// - Throws: ``LapseError`` `.output` when the page or its folder cannot be written (or exist without
    ///   `overwrite`), `.notFound` when Leaflet is missing, the video reader's errors for the thumbnails.
    @discardableResult
    public func write(to pageURL: URL, overwrite: Bool) throws -> Written {
        let page = pageURL.filePath
        try Self.checkPaths(page, overwrite: overwrite, inputs: [video, gif].compactMap { $0?.filePath })
        let leaflet = try Self.leaflet(in: leafletDirectory.filePath)
        let output = try AtomicOutput(url: pageURL, overwrite: overwrite)
        defer { output.discard() }
        let folder =
            (page as NSString).deletingLastPathComponent.isEmpty ? "." : (page as NSString).deletingLastPathComponent
        let files = Self.filesDirectory(of: page)
        let name = (files as NSString).lastPathComponent
        // Staging folders are `.NAME.<pid>-….partial`: those of runs no longer alive are removed here.
        let prefix = "." + name + "."
        for stale in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where stale.hasPrefix(prefix) && TemporaryFiles.isOrphan(stale, prefix: prefix) {
            try? FileManager.default.removeItem(atPath: folder + "/" + stale)
        }
        let staging = folder + "/" + prefix + "\(getpid())-thumbnails.partial"
        let previous = folder + "/" + prefix + "\(getpid())-previous.partial"
        try? FileManager.default.removeItem(atPath: staging)
        defer { try? FileManager.default.removeItem(atPath: staging) }
        do {
            try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: false)
        } catch {
            throw LapseError(.output, files, "cannot be created: \(error.localizedDescription)")
        }
        let thumbs = try video.map { try thumbnails(of: $0, into: staging, as: name) } ?? []
        let html = try html(leaflet: leaflet, thumbnails: thumbs, base: folder)
        try output.write(Data(html.utf8))
        // The folder first (a page never links to thumbnails that are not there), then the page; a folder there
        // before is moved aside and put back if either fails.
        let replacing = FileManager.default.fileExists(atPath: files)
        if thumbs.isEmpty {
            // No thumbnails, no folder: the page alone (a thumbnails folder of the page it replaces goes with it).
            if replacing { try Self.checkReplaceable(files) }
            try output.commit()
            if replacing { try? FileManager.default.removeItem(atPath: files) }
            return Written(page: pageURL, filesDirectory: nil, thumbnails: 0)
        }
        if replacing {
            try Self.checkReplaceable(files)
            guard rename(files, previous) == 0 else { throw LapseError.posix(.output, files, "cannot be moved aside") }
        }
        do {
            guard rename(staging, files) == 0 else {
                throw LapseError.posix(.output, files, "cannot be renamed into place")
            }
            try output.commit()
        } catch {
            if replacing {
                try? FileManager.default.removeItem(atPath: files)
                _ = rename(previous, files)
            }
            throw error
        }
        if replacing { try? FileManager.default.removeItem(atPath: previous) }
        return Written(
            page: pageURL, filesDirectory: URL(fileURLWithPath: files, isDirectory: true), thumbnails: thumbs.count)
    }

    /// A thumbnail of a frame: its index, time and relative source.
    struct Thumbnail: Encodable {
        var frame: Int
        var time: Double
        var src: String
    }

    /// Every n-th frame of the video (at most ``maxThumbnails``), ``thumbnailWidth`` wide, as JPEG files
    /// `frame-NNNNN.jpg` in `folder` (named in the page as `name/…`).
    func thumbnails(of video: URL, into folder: String, as name: String) throws -> [Thumbnail] {
        let reader = try VideoFrameReader(video)
        let w = max(2, thumbnailWidth)
        let h = max(
            2, Int((Double(w) * Double(reader.displayHeight) / Double(max(1, reader.displayWidth))).rounded()) / 2 * 2)
        reader.outputSize = (w, h)
        let estimate =
            reader.duration.flatMap { d in reader.frameRate.map { Int((d * $0).rounded()) } } ?? maxThumbnails
        let frames = report.frames.isEmpty ? estimate : report.frames.count
        let step = max(1, Int((Double(frames) / Double(maxThumbnails)).rounded(.up)))
        // The frames of the report (crossfades put blended frames between them): their indices in the video.
        // Every n-th of the report's frames and every panorama's own (for its marker).
        let wanted =
            report.frames.isEmpty
            ? nil
            : Set(
                report.frames.enumerated().filter { $0.offset % step == 0 }.map(\.element.index)
                    + report.panoramas.compactMap(\.frame))
        let last = wanted?.max() ?? Int.max
        let encodedName = name.addingPercentEncoding(withAllowedCharacters: Self.pathCharacters) ?? name
        var result: [Thumbnail] = []
        var index = 0
        while index <= last {
            let take = wanted.map { $0.contains(index) } ?? (index % step == 0)
            if take {
                guard let (time, pixels) = try reader.nextFrame() else { break }
                let file = String(format: "frame-%05d.jpg", index)
                try ImageWriter.write(
                    pixels, to: URL(fileURLWithPath: folder + "/" + file), format: .jpeg(quality: 80), overwrite: false)
                result.append(Thumbnail(frame: index, time: time, src: encodedName + "/" + file))
            } else if try reader.skipFrame() == nil {
                break
            }
            index += 1
        }
        return result
    }

    /// Leaflet's script and style sheet.
    static func leaflet(in folder: String) throws -> (script: String, style: String) {
        let script = [folder + "/leaflet.min.js", folder + "/leaflet.js"].lazy.compactMap {
            try? String(contentsOfFile: $0, encoding: .utf8)
        }.first
        guard let script, let style = try? String(contentsOfFile: folder + "/leaflet.css", encoding: .utf8) else {
            throw LapseError(
                .notFound, folder, "has no Leaflet (leaflet.js and leaflet.css; Debian: apt install libjs-leaflet)")
        }
        return (script, style)
    }

    /// `path` relative to the folder `base` (both made absolute first), with `/` separators.
    static func relative(_ path: String, from base: String) -> String {
        func parts(_ p: String) -> [String] { (resolved(p) as NSString).pathComponents.filter { $0 != "/" } }
        let absolute = base.hasPrefix("/") ? base : FileManager.default.currentDirectoryPath + "/" + base
        let directory = URL(fileURLWithPath: absolute).standardizedFileURL.resolvingSymlinksInPath().path
        let target = parts(path)
        let from = (directory as NSString).pathComponents.filter { $0 != "/" }
        var common = 0
        while common < min(target.count, from.count), target[common] == from[common] { common += 1 }
        let up = [String](repeating: "..", count: from.count - common)
        let link = (up + target[common...]).map {
            $0.addingPercentEncoding(withAllowedCharacters: pathCharacters) ?? $0
        }.joined(separator: "/")
        return up.isEmpty ? "./" + link : link // "./": a first segment with a colon is not a scheme
    }

    /// What a path segment of a relative link keeps unencoded (no `/`, `?`, `#`, `%`, quotes, `:` …).
    static let pathCharacters: CharacterSet = {
        var c = CharacterSet.alphanumerics
        c.insert(charactersIn: "-._~")
        return c
    }()

    /// JSON safe inside a `<script>` element: every `<` written `\u003c` (so neither `</script>` nor `<!--`
    /// inside a string can end or change the element).
    static func scriptJSON(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).replacingOccurrences(of: "<", with: "\\u003c")
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    func html(leaflet: (script: String, style: String), thumbnails: [Thumbnail], base: String) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json(_ value: some Encodable) throws -> Data {
            do { return try encoder.encode(value) } catch {
                throw LapseError(.invalidInput, title, "the report's data cannot be written as JSON: \(error)")
            }
        }
        let reportJSON = try json(report)
        let thumbsJSON = try json(thumbnails)
        let media = MediaLinks(
            video: video.map { Self.relative($0.filePath, from: base) },
            gif: gif.map { Self.relative($0.filePath, from: base) })
        let mediaJSON = try json(media)
        let creditItems = credits.map { "<li>\(Self.escaped($0))</li>" }.joined(separator: "\n")
        return """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escaped(title))</title>
            <style>
            \(leaflet.style)
            </style>
            <style>
            \(Self.style)
            </style>
            <script>
            \(leaflet.script)
            </script>
            </head>
            <body>
            <header><h1>\(Self.escaped(title))</h1><p id="subtitle"></p></header>
            <main>
            <section id="map-section"><h2>Route and coverage</h2>
            <div id="map"></div><div id="legend"></div><p id="no-map" hidden></p></section>
            <section id="media-section"><h2>Result</h2><div id="media"></div></section>
            <section id="strip-section"><h2>Frames</h2><div id="frames"></div></section>
            <section id="plot-section"><h2>Camera</h2>
            <svg class="plot" id="heading-plot" viewBox="0 0 900 240" role="img"
              aria-label="headings along the route"></svg>
            <svg class="plot" id="pitch-plot" viewBox="0 0 900 160" role="img"
              aria-label="pitch and field of view along the route"></svg>
            <p id="no-plot" hidden></p></section>
            <section id="summary-section"><h2>Summary</h2><table id="summary"></table></section>
            <section id="credits-section"\(credits.isEmpty ? " hidden" : "")><h2>Credits</h2><ul id="credits">
            \(creditItems)
            </ul></section>
            </main>
            <script type="application/json" id="lapse-report">\(Self.scriptJSON(reportJSON))</script>
            <script type="application/json" id="lapse-summary">\(Self.scriptJSON(summaryJSON))</script>
            <script type="application/json" id="lapse-thumbnails">\(Self.scriptJSON(thumbsJSON))</script>
            <script type="application/json" id="lapse-media">\(Self.scriptJSON(mediaJSON))</script>
            <script>
            \(Self.script)
            </script>
            </body>
            </html>

            """
    }

    struct MediaLinks: Encodable { var video: String?, gif: String? }

    static let style = """
        body { font: 14px/1.4 "DejaVu Sans", sans-serif; margin: 0; color: #222; background: #fafafa; }
        header { padding: 12px 20px; background: #263238; color: #fff; }
        header h1 { margin: 0; font-size: 20px; } header p { margin: 4px 0 0; color: #cfd8dc; }
        main { padding: 0 20px 20px; max-width: 1200px; }
        h2 { font-size: 16px; margin: 18px 0 8px; }
        #map { height: 420px; background: #e9eef2; border: 1px solid #b0bec5; }
        #legend span { display: inline-block; margin-right: 14px; }
        #legend i { display: inline-block; width: 22px; height: 4px; margin-right: 5px; vertical-align: middle; }
        #media video, #media img { max-width: 100%; margin: 0 12px 8px 0; vertical-align: top; background: #000; }
        #frames { display: flex; flex-wrap: wrap; gap: 4px; }
        #frames img { cursor: pointer; border: 2px solid transparent; }
        #frames img:hover { border-color: #ff9800; }
        svg.plot { width: 100%; max-width: 900px; display: block; background: #fff; border: 1px solid #cfd8dc;
          margin-bottom: 8px; }
        svg.plot text { font-size: 11px; fill: #455a64; }
        svg.plot .axis { stroke: #90a4ae; stroke-width: 1; }
        svg.plot .series { fill: none; stroke-width: 1.6; }
        table { border-collapse: collapse; } th, td { text-align: left; padding: 2px 12px 2px 0;
          border-bottom: 1px solid #eceff1; }
        th { font-weight: normal; color: #546e7a; }
        .popup img { display: block; margin-top: 4px; }
        """

    static let script = """
        'use strict';
        const data = id => JSON.parse(document.getElementById(id).textContent);
        const report = data('lapse-report'), summary = data('lapse-summary'), thumbs = data('lapse-thumbnails'),
          media = data('lapse-media');
        const colours = { panorama: '#2e7d32', uncovered: '#c62828', duplicate: '#9e9e9e', stationary: '#ef6c00',
          unavailable: '#6a1b9a' };
        const labels = { panorama: 'panorama', uncovered: 'no panorama', duplicate: 'duplicate (dropped)',
          stationary: 'stationary (dropped)', unavailable: 'could not be had' };
        const svgNS = 'http://www.w3.org/2000/svg';
        function el(tag, attrs, parent, text) {
          const e = tag.startsWith('svg:') ? document.createElementNS(svgNS,
            tag.slice(4)) : document.createElement(tag);
          for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
          if (text !== undefined) e.textContent = text;
          if (parent) parent.appendChild(e);
          return e;
        }
        function thumbFor(frame) {
          let best = null;
          for (const t of thumbs) if (best === null
            || Math.abs(t.frame - frame) < Math.abs(best.frame - frame)) best = t;
          return best;
        }
        const counts = {};
        for (const p of report.points) counts[p.status] = (counts[p.status] || 0) + 1;
        // "1 frame", "2 frames"; the point unit is given plural ("route points", "video frames").
        const counted = (n, plural) => n + ' ' + (n === 1 && plural.endsWith('s') ? plural.slice(0, -1) : plural);
        document.getElementById('subtitle').textContent = counted(report.points.length, report.point_unit) + ', ' +
          counted(report.panoramas.length, 'panoramas') + ', ' + counted(report.frames.length, 'frames');

        // The summary, as --json gave it (nested objects as dotted keys), numbers with their units and sensible
        // digits (the exact value in the cell's data-value and its tooltip).
        function shown(key, v) {
          const k = key.split('.').pop();
          const digits = (x, d) => Number.isInteger(x) ? String(x) : x.toFixed(d);
          if (/bytes$/.test(k)) return v < 1000 ? v + ' bytes' : v < 1e6 ? (v / 1e3).toFixed(1) + ' kB' :
            (v / 1e6).toFixed(1) + ' MB';
          if (k === 'distance' || /_m$/.test(k)) return v >= 1000 ? (v / 1000).toFixed(2) + ' km' :
            digits(v, 1) + ' m';
          if (/_km$/.test(k)) return v.toFixed(2) + ' km';
          if (k === 'seconds' || /_seconds$/.test(k)) return v.toFixed(1) + ' s';
          if (k === 'duration' || k === 'start' || k === 'end' || /_time$/.test(k)) return digits(v, 3) + ' s';
          if (k === 'fps') return digits(v, 3) + ' fps';
          if (k === 'speed') return v.toFixed(2) + '×';
          if (k === 'consistent_share') return (100 * v).toFixed(0) + ' %';
          if (['travel_direction', 'travel_elevation', 'longitude', 'latitude', 'spread', 'deviation', 'median',
               'p90', 'heading', 'pitch', 'roll', 'fov'].includes(k)) return digits(v, 1) + '°';
          return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4)));
        }
        (function () {
          const table = document.getElementById('summary');
          function add(prefix, value) {
            if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
              for (const [k, v] of Object.entries(value)) add(prefix ? prefix + '.' + k : k, v);
              return;
            }
            const row = el('tr', {}, table);
            el('th', {}, row, prefix);
            const exact = value === null ? '–' : (Array.isArray(value) ? JSON.stringify(value) : String(value));
            const attributes = { 'data-key': prefix, 'data-value': exact };
            if (typeof value === 'number') attributes.title = exact;
            el('td', attributes, row, typeof value === 'number' ? shown(prefix, value) : exact);
          }
          add('', summary);
        })();

        // The map: the route coloured by what each point had, a marker per panorama.
        (function () {
          const noMap = document.getElementById('no-map');
          if (!report.positions_known || report.points.length === 0 || typeof L === 'undefined') {
            document.getElementById('map').hidden = true;
            document.getElementById('legend').hidden = true;
            noMap.hidden = false;
            noMap.textContent = report.positions_known ? 'No map: no points.' :
              'No map: the ' + report.point_unit + ' have no positions (a video without a track).';
            return;
          }
          const map = L.map('map');
          if (report.basemap === 'openstreetmap') {
            L.tileLayer('https://tile.openstreetmap.org/{z}/{x}/{y}.png', { maxZoom: 19,
              attribution: '&copy; <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'
                }).addTo(map);
          } else {
            noMap.hidden = false;
            noMap.textContent = 'No base map: the route came from Google Maps Platform, whose terms allow showing it ' +
              'on a Google map or on none.';
          }
          if (report.route_credit) map.attributionControl.addAttribution(
            report.route_credit.replace(/[<>&]/g, c => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;' })[c]));
          L.control.scale({ metric: true, imperial: false }).addTo(map);
          const pts = report.points;
          let run = [[pts[0].latitude, pts[0].longitude]], status = pts[0].status;
          const lines = [];
          function finish() { if (run.length) lines.push(L.polyline(run.length > 1 ? run : [run[0], run[0]],
            { color: colours[status], weight: 5, opacity: 0.9, className: 'route status-' + status }).addTo(map)); }
          for (let i = 1; i < pts.length; i++) {
            const ll = [pts[i].latitude, pts[i].longitude];
            if (pts[i].after_jump) { finish(); run = [ll]; status = pts[i].status; // no line across a jump
            } else if (pts[i].status !== status) { run.push(ll); finish(); run = [ll]; status = pts[i].status;
            } else run.push(ll);
          }
          finish();
          for (const p of report.panoramas) {
            const hasFrame = p.frame !== null && p.frame !== undefined;
            const t = hasFrame ? thumbFor(p.frame) : null;
            const box = el('div', { class: 'popup' });
            el('b', {}, box, p.id);
            const lines = [p.date ? 'taken ' + p.date : null, p.distance.toFixed(1) + ' m from point ' + p.point,
              hasFrame ? 'frame ' + p.frame : null];
            for (const line of lines) if (line) { el('br', {}, box); box.appendChild(document.createTextNode(line)); }
            if (t) el('img', { src: t.src, width: 160, alt: 'frame ' + t.frame }, box);
            L.circleMarker([p.latitude, p.longitude], { radius: 5, color: '#0d47a1', weight: 1, fillColor: '#42a5f5',
              fillOpacity: 0.9, className: 'pano-marker' })
              .bindPopup(box).addTo(map);
          }
          map.fitBounds(L.latLngBounds(pts.map(p => [p.latitude, p.longitude])).pad(0.05));
          const legend = document.getElementById('legend');
          for (const s of Object.keys(colours)) {
            if (!counts[s]) continue;
            const item = el('span', {}, legend);
            el('i', { style: 'background:' + colours[s] }, item);
            item.appendChild(document.createTextNode(labels[s] + ': ' + counts[s]));
          }
        })();

        // The video and the GIF.
        const mediaBox = document.getElementById('media');
        let video = null;
        if (media.video) video = el('video', { id: 'video', src: media.video, controls: '', preload: 'auto',
          width: 640 }, mediaBox);
        if (media.gif) el('img', { id: 'gif', src: media.gif, alt: 'the GIF', width: 320 }, mediaBox);
        if (!media.video && !media.gif) el('p', {}, mediaBox,
          'No video: a preview runs the route and the lookups only.');

        // The frame strip: a click seeks the video to the frame.
        (function () {
          const strip = document.getElementById('frames');
          if (thumbs.length === 0) { el('p', {}, strip, 'No frames.'); return; }
          // A thumbnail every few frames: at most 48 in the strip (the markers' popups show the others).
          const every = Math.ceil(thumbs.length / 48);
          for (const t of thumbs.filter((_, k) => k % every === 0)) {
            const img = el('img', { src: t.src, width: 120, alt: 'frame ' + t.frame,
              title: 'frame ' + t.frame + ' at ' + t.time.toFixed(2) + ' s', 'data-time': t.time }, strip);
            img.addEventListener('click', () => { if (video) { video.pause(); video.currentTime = t.time + 0.001; } });
          }
        })();

        // Headings along the frames (unwrapped), pitch and fov.
        function plot(svg, series, height, unit) {
          const frames = report.frames, left = 50, right = 890, top = 12, bottom = height - 26;
          let lo = Infinity, hi = -Infinity;
          for (const s of series) for (const v of s.values) { if (v < lo) lo = v; if (v > hi) hi = v; }
          if (hi - lo < 10) { const m = (hi + lo) / 2; lo = m - 5; hi = m + 5; }
          const n = Math.max(1, frames.length - 1);
          const x = i => left + (right - left) * i / n, y = v => bottom - (bottom - top) * (v - lo) / (hi - lo);
          el('svg:line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'axis' }, svg);
          el('svg:line', { x1: left, y1: top, x2: left, y2: bottom, class: 'axis' }, svg);
          for (let k = 0; k <= 4; k++) {
            const v = lo + (hi - lo) * k / 4;
            const label = unit === '°' && series.wraps ? ((Math.round(v) % 360) + 360) % 360 : Math.round(v);
            el('svg:text', { x: 4, y: y(v) + 4 }, svg, (label || 0) + unit);
          }
          el('svg:text', { x: right - 60, y: height - 6 }, svg, 'frame ' + (frames.length - 1));
          el('svg:text', { x: left, y: height - 6 }, svg, 'frame 0');
          let lx = left + 90;
          for (const s of series) {
            el('svg:polyline', { class: 'series ' + s.name, stroke: s.colour, 'stroke-dasharray': s.dash || '',
              points: s.values.map((v, i) => x(i).toFixed(1) + ',' + y(v).toFixed(1)).join(' ') }, svg);
            el('svg:line', { x1: lx, y1: height - 10, x2: lx + 18, y2: height - 10, stroke: s.colour,
              'stroke-width': 2 }, svg);
            el('svg:text', { x: lx + 22, y: height - 6 }, svg, s.label);
            lx += 30 + s.label.length * 6.5;
          }
        }
        // Headings unwrapped (0° and 359° are 1° apart, not 359°), each series starting within 180° of `near` (the
        // camera's first heading) so that series of the same direction are drawn together.
        function unwrap(values, near) {
          const out = [];
          for (const v of values) {
            const from = out.length === 0 ? (near === undefined ? v : near) : out[out.length - 1];
            out.push(from + ((v - from) % 360 + 540) % 360 - 180);
          }
          return out;
        }
        (function () {
          const f = report.frames;
          if (f.length === 0) {
            document.getElementById('heading-plot').style.display = 'none';   // SVG has no hidden property
            document.getElementById('pitch-plot').style.display = 'none';
            const p = document.getElementById('no-plot');
            p.hidden = false;
            p.textContent = 'No frames: the camera is planned when the hyperlapse renders.';
            return;
          }
          const camera = unwrap(f.map(x => x.heading));
          const headings = [
            { name: 'camera', label: 'camera heading', colour: '#d84315', values: camera },
            { name: 'source', label: 'panorama heading (source)', colour: '#78909c', dash: '4 3',
              values: unwrap(f.map(x => x.source_pano_heading), camera[0]) },
            { name: 'stabilised', label: 'panorama heading (posed)', colour: '#1565c0',
              values: unwrap(f.map(x => x.pano_heading), camera[0]) },
          ];
          headings.wraps = true;
          plot(document.getElementById('heading-plot'), headings, 240, '°');
          plot(document.getElementById('pitch-plot'), [
            { name: 'pitch', label: 'pitch', colour: '#6a1b9a', values: f.map(x => x.pitch) },
            { name: 'fov', label: 'field of view', colour: '#2e7d32', values: f.map(x => x.fov) },
          ], 160, '°');
        })();
        """
}
