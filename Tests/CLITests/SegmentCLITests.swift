// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import Synchronization
import TestSupport
import Testing

/// `lapse hyperlapse --segment K/N` and `lapse concat`: a hyperlapse rendered in parts by several processes and
/// joined by stream copy equals the single run.
@Suite struct SegmentCLITests {
    let dir = TestData.scratchDirectory("segmentcli")
    let video = "video:" + TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Runs `lapse` processes at once and waits for all.
    func runAtOnce(_ runs: [[String]]) throws -> [ProcessResult] {
        let results = Mutex<[Int: ProcessResult]>([:])
        let errors = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: runs.count) { i in
            do {
                let r = try Shell.lapse(runs[i])
                results.withLock { $0[i] = r }
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        #expect(errors.withLock { $0 }.isEmpty)
        return try (0..<runs.count).map { i in try #require(results.withLock { $0[i] }) }
    }

    /// Presentation times of every video packet, in the stream's time base, sorted.
    func packetTimes(_ file: String) throws -> [Int] {
        try FFmpegReference.probe(file, ["-select_streams", "v:0", "-show_entries", "packet=pts", "-of", "csv=p=0"])
            .split(whereSeparator: \.isNewline).compactMap { Int($0) }.sorted()
    }

    func frameCount(_ file: String) throws -> Int { try packetTimes(file).count }

    /// The demo (120 frames, the keyframed camera, 1280×720) as three segments rendered at once by three processes
    /// sharing one cache folder, joined: 120 frames at an even step from pts 0, every frame ≥ 40 dB against the
    /// single run, and the GIF made from the joined video.
    @Test func threeSegmentsJoinedEqualTheSingleRun() throws {
        let common = [
            "hyperlapse", "--source", video, "--pano-heading", "0",
            "--keyframes", TestData.projectRoot.appendingPathComponent("examples/overpass-camera.json").path,
            "--fps", "24", "--size", "1280x720", "--cache-dir", path("cache"), "--copyright", "© 2014 Overpass",
            "--quiet"
        ]
        let single = try Shell.lapse(common + ["-o", path("single.mp4")])
        #expect(single.status == 0, "\(single.stderr)")
        let parts = try runAtOnce(
            (1...3).map { common + ["--segment", "\($0)/3", "-o", path("part-\($0).mp4"), "--json"] })
        for (k, r) in parts.enumerated() {
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSummary.parse(r.stdoutData))
            let segment = try #require(json["segment"] as? [String: Any])
            #expect(segment["job_frames"] as? Int == 120)
            #expect(segment["first_frame"] as? Int == 40 * k)
            #expect(segment["frames"] as? Int == 40)
            // Global timestamps: part K starts at frame 40·(K−1), as the MP4's edit list says.
            let start = try FFmpegReference.probe(
                path("part-\(k + 1).mp4"),
                ["-select_streams", "v:0", "-show_entries", "stream=start_time", "-of", "csv=p=0"])
            #expect(
                abs((Double(start.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1) - Double(40 * k) / 24) < 1e-6)
            #expect(try frameCount(path("part-\(k + 1).mp4")) == 40)
            // Each part starts with an IDR frame (a keyframe, intra-coded), so it decodes on its own and joins.
            let first = try FFmpegReference.probe(
                path("part-\(k + 1).mp4"),
                [
                    "-select_streams", "v:0", "-read_intervals", "%+#1",
                    "-show_entries", "frame=key_frame,pict_type", "-of", "csv=p=0"
                ])
            #expect(first.hasPrefix("1,I"), "\(first)")
        }
        let join = try Shell.lapse([
            "concat", path("part-1.mp4"), path("part-2.mp4"), path("part-3.mp4"),
            "-o", path("joined.mp4"), "--gif", path("joined.gif"), "--json"
        ])
        #expect(join.status == 0, "\(join.stderr)")
        let summary = try #require(try JSONSummary.parse(join.stdoutData))
        #expect(summary["frames"] as? Int == 120)
        #expect(abs((summary["duration"] as? Double ?? 0) - 5) < 1e-6)

        // An even frame step from 0: 1/24 s in the stream's time base.
        let times = try packetTimes(path("joined.mp4"))
        #expect(times.count == 120)
        let step = times[1] - times[0]
        #expect(times.first == 0 && step > 0)
        #expect(times.enumerated().allSatisfy { $0.element == $0.offset * step }, "\(times.prefix(50))")
        // The index (moov) before the media data (mdat): the joined file plays while it downloads.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path("joined.mp4")))
        let moov = try #require(bytes.range(of: Data("moov".utf8)))
        let mdat = try #require(bytes.range(of: Data("mdat".utf8)))
        #expect(moov.lowerBound < mdat.lowerBound)
        #expect(try FFmpegReference.formatTags(path("joined.mp4"))["copyright"] == "© 2014 Overpass") // once

        let joined = try FFmpegReference.frames(path("joined.mp4"))
        let reference = try FFmpegReference.frames(path("single.mp4"))
        #expect(joined.count == 120 && reference.count == 120)
        let worst = zip(joined, reference).map { ImageMetrics.psnr($0, $1) }.min() ?? 0
        #expect(worst >= 40, "worst frame \(worst) dB")

        let gif = try FFmpegReference.probe(
            path("joined.gif"),
            ["-count_frames", "-show_entries", "stream=width,height,nb_read_frames", "-of", "csv=p=0"])
        #expect(gif.trimmingCharacters(in: .whitespacesAndNewlines) == "426,240,120")
        #expect(
            try String(contentsOfFile: path("joined.credits.txt"), encoding: .utf8)
                == String(contentsOfFile: path("single.credits.txt"), encoding: .utf8))
    }

    /// Boundaries exact when N does not divide F: 12 frames in 5 segments are ⌊(K−1)·12/5⌋ … ⌊K·12/5⌋−1
    /// (2, 2, 3, 2, 3 frames), each starting at its first frame's global pts; joined, they are the single run —
    /// encoded losslessly (CRF 0), decoded frame for frame identical (the same frames planned, posed, rendered).
    @Test func boundariesAreExactWhenNDoesNotDivideTheFrames() throws {
        let common = [
            "hyperlapse", "--source", video, "--frame-step", "10", "--size", "320x160", "--fps", "12", "--crf", "0",
            "--quiet"
        ]
        let single = try Shell.lapse(common + ["-o", path("single.mp4")])
        #expect(single.status == 0, "\(single.stderr)")
        let parts = try runAtOnce(
            (1...5).map { common + ["--segment", "\($0)/5", "-o", path("part-\($0).mp4"), "--json"] })
        let firsts = [0, 2, 4, 7, 9]
        let counts = [2, 2, 3, 2, 3]
        var times: [Int] = []
        for (k, r) in parts.enumerated() {
            #expect(r.status == 0, "\(r.stderr)")
            let segment = try JSONSummary.parse(r.stdoutData)
            #expect((segment?["segment"] as? [String: Any])?["first_frame"] as? Int == firsts[k])
            let pts = try packetTimes(path("part-\(k + 1).mp4"))
            #expect(pts.count == counts[k])
            times += pts
        }
        // The parts' global timestamps follow on from each other: one even sequence across them.
        let step = times[1] - times[0]
        #expect(times.enumerated().allSatisfy { $0.element == $0.offset * step }, "\(times)")
        let join = try Shell.lapse(
            ["concat"] + (1...5).map { path("part-\($0).mp4") } + ["-o", path("joined.mp4"), "--quiet"])
        #expect(join.status == 0, "\(join.stderr)")
        let joined = try FFmpegReference.frames(path("joined.mp4"))
        let reference = try FFmpegReference.frames(path("single.mp4"))
        #expect(joined.count == 12 && reference.count == 12)
        #expect(zip(joined, reference).allSatisfy { $0.bytes == $1.bytes })
    }

    /// More segments than frames: 4 frames in 6 segments leave segments 1 and 4 empty; they say so, exit 0 and
    /// write nothing (no video, credits or job file); the others have one frame each.
    @Test func emptySegmentsSaySoAndWriteNothing() throws {
        let common = ["hyperlapse", "--source", video, "--frame-step", "30", "--size", "320x160", "--no-stabilize"]
        for k in 1...6 {
            let r = try Shell.lapse(common + ["--segment", "\(k)/6", "-o", path("part-\(k).mp4")])
            #expect(r.status == 0, "\(r.stderr)")
            let empty = k == 1 || k == 4
            #expect(
                r.stdout.contains(
                    "segment \(k)/6: no frames (the job has 4 frames, fewer than 6 segments); nothing written")
                    == empty,
                "\(r.stdout)")
            #expect(FileManager.default.fileExists(atPath: path("part-\(k).mp4")) == !empty)
            if empty {
                #expect(!FileManager.default.fileExists(atPath: path("part-\(k).credits.txt")))
                #expect(!FileManager.default.fileExists(atPath: path("part-\(k).job.json")))
            } else {
                #expect(try frameCount(path("part-\(k).mp4")) == 1)
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
        #expect(left.filter { $0.contains("partial") || $0.hasPrefix(".") }.isEmpty, "\(left)")
    }

    /// Parts that differ (size, codec settings) are refused with the input named, and nothing is written; bad
    /// segment numbers and a GIF asked of a segment are usage errors.
    @Test func concatRefusesMismatchedInputs() throws {
        let common = ["hyperlapse", "--source", video, "--frame-step", "30", "--no-stabilize", "--quiet"]
        #expect(try Shell.lapse(common + ["--size", "320x160", "--segment", "1/2", "-o", path("a.mp4")]).status == 0)
        #expect(try Shell.lapse(common + ["--size", "480x240", "--segment", "2/2", "-o", path("b.mp4")]).status == 0)
        let r = try Shell.lapse(["concat", path("a.mp4"), path("b.mp4"), "-o", path("ab.mp4")])
        #expect(r.status == 1)
        #expect(
            r.stderr.contains(
                """
                \(path("b.mp4")): cannot be joined to \(path("a.mp4")) by stream copy: its video is 480x240, not \
                320x160
                """
            ), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("ab.mp4")))

        // Parts that do join, and a GIF width beyond the video's: clamped, with a warning.
        let a2 = try Shell.lapse(common + ["--size", "320x160", "--segment", "2/2", "-o", path("a2.mp4")])
        #expect(a2.status == 0, "\(a2.stderr)")
        let wide = try Shell.lapse([
            "concat", path("a.mp4"), path("a2.mp4"), "-o", path("aa.mp4"), "--gif", path("aa.gif"), "--gif-width",
            "1000"
        ])
        #expect(wide.status == 0, "\(wide.stderr)")
        #expect(
            wide.stderr.contains(
                "warning: the GIF width asked for (1000) is more than the video's: the GIF is 320 wide"),
            "\(wide.stderr)")
        #expect(try FFmpegReference.dimensions(path("aa.gif")) == (320, 160))

        // The second part (a2.mp4, above) given first: named as such, not as following "inputs before it" that
        // there are none of.
        let swapped = try Shell.lapse(["concat", path("a2.mp4"), path("a.mp4"), "-o", path("swapped.mp4")])
        #expect(
            swapped.status == 1
                && swapped.stderr.contains(
                    "but the first input must start at 0:00.000 (is the first part missing?): give the parts in order"),
            "\(swapped.stderr)")

        // Another kind of video: an H.264 of the same size but 4:4:4, or no video at all.
        #expect(
            try Shell.run(
                "ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc2=s=320x160:d=0.5", "-pix_fmt", "yuv444p",
                    "-c:v", "libx264", path("c.mp4")
                ]
            ).status == 0)
        let c = try Shell.lapse(["concat", path("a.mp4"), path("c.mp4"), "-o", path("ac.mp4")])
        #expect(
            c.status == 1
                && c.stderr.contains(
                    "c.mp4: cannot be joined to \(path("a.mp4")) by stream copy: its pixel format is yuv444p"),
            "\(c.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("ac.mp4")))

        for bad in ["0/3", "4/3", "2", "a/b", "1/0"] {
            let u = try Shell.lapse(common + ["--size", "320x160", "--segment", bad, "-o", path("u.mp4")])
            #expect(u.status == 64, "\(bad): \(u.stderr)")
        }
        let g = try Shell.lapse(
            common + ["--size", "320x160", "--segment", "1/2", "--gif", path("g.gif"), "-o", path("g.mp4")])
        #expect(g.status == 64 && g.stderr.contains("lapse concat"), "\(g.stderr)")
        #expect(try Shell.lapse(["concat", path("a.mp4"), "-o", path("one.mp4")]).status == 64)
        // An output that exists is kept without --overwrite.
        let exists = try Shell.lapse(["concat", path("a.mp4"), path("a.mp4"), "-o", path("b.mp4")])
        #expect(exists.status == 1)
        #expect(try frameCount(path("b.mp4")) == 2)
    }

    /// The GNU parallel example (examples/segments/parallel.sh, 4 segments, 2 at once, one cache) gives the single
    /// run's video: losslessly encoded, identical frames.
    @Test func parallelExampleGivesTheSingleRun() throws {
        let options = [
            "--source", video, "--frame-step", "6", "--size", "320x160", "--fps", "12", "--crf", "0", "--cache-dir",
            path("cache")
        ]
        let single = try Shell.lapse(["hyperlapse"] + options + ["-o", path("single.mp4"), "--quiet"])
        #expect(single.status == 0, "\(single.stderr)")
        let script = TestData.projectRoot.appendingPathComponent("examples/segments/parallel.sh").path
        let r = try Shell.run(
            "bash", [script, "4", path("parallel.mp4")] + options,
            environment: ["LAPSE": Shell.lapseBinary, "JOBS": "2"])
        #expect(r.status == 0, "\(r.stderr)")
        let joined = try FFmpegReference.frames(path("parallel.mp4"))
        let reference = try FFmpegReference.frames(path("single.mp4"))
        #expect(joined.count == 20 && reference.count == 20)
        #expect(zip(joined, reference).allSatisfy { $0.bytes == $1.bytes })
        #expect(!FileManager.default.fileExists(atPath: path("parallel.parts")))
        #expect(FileManager.default.fileExists(atPath: path("parallel.credits.txt")))
    }
}

/// The Kubernetes examples are what a cluster accepts: `kubernetes-validate` (PyPI, installed by `make test` into
/// `.build/tools-venv`) checks them strictly, offline, against the schemas of Kubernetes 1.31 (the oldest release
/// the README names: `backoffLimitPerIndex` is on by default from 1.29) and 1.37; a manifest with a misspelt field
/// or a value of the wrong type fails (issue #44, item 3).
@Suite struct KubernetesExampleTests {
    static let validator = TestData.projectRoot.appendingPathComponent(".build/tools-venv/bin/kubernetes-validate").path
    static let examples = ["kubernetes-volume.yaml", "kubernetes-segments.yaml", "kubernetes-concat.yaml"].map {
        TestData.projectRoot.appendingPathComponent("examples/segments/" + $0).path
    }

    @Test(arguments: ["1.31.0", "1.37.0"])
    func theManifestsValidate(version: String) throws {
        let r = try Shell.run(Self.validator, ["--strict", "-k", version] + Self.examples)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.components(separatedBy: " passed for resource ").count - 1 == 3, "\(r.stdout)")
    }

    @Test(arguments: [
        ("completionMode: Indexed", "completionMod: Indexed"), // a misspelt field (strict: unexpected)
        ("backoffLimitPerIndex: 3", "backoffLimitPerIndex: three") // the wrong type
    ])
    func aBrokenManifestDoesNot(_ right: String, _ wrong: String) throws {
        let text = try String(contentsOfFile: Self.examples[1], encoding: .utf8)
        #expect(text.contains(right))
        let dir = TestData.scratchDirectory("k8s-broken")
        defer { try? FileManager.default.removeItem(at: dir) }
        let broken = dir.appendingPathComponent("broken.yaml").path
        try text.replacingOccurrences(of: right, with: wrong).write(toFile: broken, atomically: true, encoding: .utf8)
        let r = try Shell.run(Self.validator, ["--strict", "-k", "1.37.0", broken])
        #expect(r.status != 0, "\(r.stdout)\(r.stderr)")
    }
}

/// Segments of a Street View hyperlapse (the Map Tiles stand-in) as three processes at once on one cold cache.
@Suite struct SegmentRouteCLITests {
    let dir = TestData.scratchDirectory("segmentroute")

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

    /// Each segment downloads the view tiles of its own frames only (every zoom-2 tile of the single run is
    /// fetched once in all, none twice); every segment looks the whole route up, but each panorama's metadata is
    /// downloaded once in all (a per-entry lock in the shared cache: the others wait and read it, issue #44 item 4);
    /// the three share the cache at once without a torn or missing entry, and the joined video has the single
    /// run's frames exactly (lossless encoding).
    @Test func segmentsFetchOnlyTheirTilesAndShareTheCache() throws {
        let world = try RouteWorld(in: dir)
        @Sendable func arguments(cache: String) -> [String] {
            [
                "hyperlapse", "--route", world.routeFile, "--source", "google", "--spacing", "10", "--radius", "20",
                "--size", "320x180", "--zoom", "2", "--crf", "0", "--cache-dir", cache, "--quiet"
            ]
        }
        let single = try Shell.lapse(
            arguments(cache: path("cache-single")) + ["-o", path("single.mp4")], environment: world.environment)
        #expect(single.status == 0, "\(single.stderr)")
        let singleTiles = try world.tilesServed(reset: true)
        let singleViews = Set(singleTiles.keys.filter { $0.split(separator: "/")[1] == "2" })
        #expect(!singleViews.isEmpty)
        func metadataServed() throws -> Int { (try world.stats()["by_kind"] as? [String: Int])?["metadata"] ?? 0 }
        let singleMetadata = try metadataServed()
        #expect(singleMetadata >= world.panoramas.count)

        let results = Mutex<[Int: ProcessResult]>([:])
        DispatchQueue.concurrentPerform(iterations: 3) { i in
            let r = try? Shell.lapse(
                arguments(cache: path("cache")) + ["--segment", "\(i + 1)/3", "-o", path("part-\(i + 1).mp4")],
                environment: world.environment)
            results.withLock { $0[i] = r }
        }
        for i in 0..<3 {
            let r = try #require(results.withLock { $0[i] })
            #expect(r.status == 0, "\(r.stderr)")
        }
        let served = try world.tilesServed()
        let views = served.filter { $0.key.split(separator: "/")[1] == "2" }
        #expect(Set(views.keys) == singleViews)
        #expect(views.values.allSatisfy { $0 == 1 }, "\(views.filter { $0.value > 1 })")
        #expect(try metadataServed() - singleMetadata == singleMetadata) // once in all, not once a segment

        let join = try Shell.lapse([
            "concat", path("part-1.mp4"), path("part-2.mp4"), path("part-3.mp4"), "-o", path("joined.mp4"), "--quiet"
        ])
        #expect(join.status == 0, "\(join.stderr)")
        let joined = try FFmpegReference.frames(path("joined.mp4"))
        let reference = try FFmpegReference.frames(path("single.mp4"))
        #expect(joined.count == reference.count && joined.count == world.panoramas.count)
        #expect(zip(joined, reference).allSatisfy { $0.bytes == $1.bytes })
        // The joined credits are the single run's (every panorama's copyright once).
        #expect(
            try String(contentsOfFile: path("joined.credits.txt"), encoding: .utf8)
                == String(contentsOfFile: path("single.credits.txt"), encoding: .utf8))
        let partials =
            FileManager.default.enumerator(atPath: path("cache"))?.compactMap { $0 as? String }.filter {
                $0.hasSuffix(".partial") && $0 != ".partial"
            } ?? []
        #expect(partials.isEmpty, "\(partials)")
    }
}
