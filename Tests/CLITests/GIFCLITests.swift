// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import TestSupport
import Testing

@Suite struct GIFCLITests {
    /// Bad inputs and outputs: a one-line error, exit 1, and no output file; a server that stops sending gives
    /// up after `--timeout`, saying so.
    @Test(arguments: ["not-a-video", "truncated", "http-404", "stalled", "unwritable", "missing"])
    func badInputFailsCleanly(kind: String) throws {
        let dir = TestData.scratchDirectory("gif-cli")
        var output = dir.appendingPathComponent("out.gif").path
        var input = ""
        var server: LocalServer?
        switch kind {
        case "not-a-video":
            input = dir.appendingPathComponent("notes.mp4").path
            _ = FileManager.default.createFile(atPath: input, contents: Data("not a video\n".utf8))
        case "truncated":
            input = dir.appendingPathComponent("cut.mov").path
            let data = FileManager.default.contents(atPath: TestData.path("video/regift-test-file.mov"))!
            _ = FileManager.default.createFile(atPath: input, contents: data.prefix(300_000))
        case "http-404":
            server = try LocalServer(script: "http_file_server.py", arguments: ["--root", TestData.path("video")])
            input = "\(server!.baseURL)/__status/404/regift-test-file.mov?key=hidden"
        case "stalled":
            server = try LocalServer(script: "http_file_server.py", arguments: ["--root", TestData.path("video")])
            input = "\(server!.baseURL)/__stall/regift-test-file.mov?key=hidden"
        case "unwritable":
            input = TestData.path("video/iphone_rotated.mov")
            output = dir.appendingPathComponent("no/such/dir/out.gif").path
        default:
            input = dir.appendingPathComponent("missing.mov").path
        }
        let result = try Shell.lapse(
            ["gif", input, "-o", output, "--quiet"] + (kind == "stalled" ? ["--timeout", "1"] : []))
        server?.stop()
        if kind == "stalled" { #expect(result.stderr.contains("timed out: no data for 1 s"), "\(result.stderr)") }
        #expect(result.status == 1, "\(kind): \(result.stderr)")
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(kind): \(result.stderr)")
        #expect(lines.first?.hasPrefix("error: ") == true)
        #expect(!result.stderr.contains("hidden"))
        #expect(!FileManager.default.fileExists(atPath: output))
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        #expect(left.allSatisfy { !$0.hasSuffix(".gif") && !$0.contains("partial") })
    }

    @Test(arguments: [
        ["--end", "2", "--duration", "1"], ["--fps", "0"], ["--quality", "101"], ["--width", "100", "--scale", "0.5"],
        ["--loop", "2", "--no-loop"], ["--palette", "octree"], ["--bogus"]
    ])
    func usageErrorsExit64(extra: [String]) throws {
        let out = TestData.scratchDirectory("gif-cli").appendingPathComponent("u.gif").path
        let result = try Shell.lapse(["gif", TestData.path("video/iphone_rotated.mov"), "-o", out] + extra)
        #expect(result.status == 64, "\(extra): \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// `--fps` takes rationals and decimals alike: 25/2 and 12.5 give the same GIF (byte for byte), its delays
    /// adding up to the range (2 s: 25 frames of 8 cs); 1/0 and 0/1 are usage errors.
    @Test func rationalFrameRates() throws {
        let dir = TestData.scratchDirectory("gif-fps")
        let source = TestData.path("video/regift-test-file.mov")
        var made: [Data] = []
        for fps in ["25/2", "12.5"] {
            let out = dir.appendingPathComponent("fps-\(made.count).gif").path
            let r = try Shell.lapse([
                "gif", source, "--fps", fps, "--duration", "2", "--width", "160", "-o", out, "--json", "-y"
            ])
            #expect(r.status == 0, "\(r.stderr)")
            let json = try #require(try JSONSummary.parse(r.stdoutData))
            let delays = try #require(json["delays"] as? [Int])
            #expect(delays.reduce(0, +) == 200)
            #expect(delays.allSatisfy { $0 % 8 == 0 }, "\(delays)")
            made.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(made[0] == made[1])
        for bad in ["1/0", "0/1", "x"] {
            let r = try Shell.lapse(["gif", source, "--fps", bad, "-o", dir.appendingPathComponent("bad.gif").path])
            #expect(r.status == 64 && r.stderr.contains("--fps takes frames per second"), "\(bad): \(r.stderr)")
        }
    }

    @Test func writesAGIFAndAJSONSummary() throws {
        let dir = TestData.scratchDirectory("gif-cli")
        let out = dir.appendingPathComponent("r.gif").path
        let result = try Shell.lapse([
            "gif", TestData.path("video/regift-test-file.mov"), "--fps", "5", "--duration", "3.2",
            "--no-loop", "--width", "200", "-o", out, "--json"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSummary.parse(result.stdoutData))
        #expect(json["width"] as? Int == 200)
        #expect(json["height"] as? Int == 106)
        let delays = try #require(json["delays"] as? [Int])
        #expect(delays.reduce(0, +) == 320)
        // gifsicle as an independent reader: no loop extension, GIF89a header.
        let info = try Shell.run("gifsicle", ["--info", out])
        #expect(info.status == 0)
        #expect(!info.stdout.contains("loop"))
        #expect(FileManager.default.contents(atPath: out)?.prefix(6) == Data("GIF89a".utf8))
        // Without --overwrite an existing file is kept.
        let again = try Shell.lapse(["gif", TestData.path("video/regift-test-file.mov"), "-o", out, "--quiet"])
        #expect(again.status == 1)
    }

    /// A video named as no video is (`.insv`, `.vid`, no extension: many downloads) is still a video: the same
    /// GIF, byte for byte, as from the file under its own name (it was refused: "a video …, not a still image");
    /// a JPEG without an extension is still a picture.
    @Test(arguments: ["clip.vid", "clip"])
    func aVideoUnderAnyName(name: String) throws {
        let dir = TestData.scratchDirectory("gif-cli-names")
        let renamed = dir.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: renamed)
        try FileManager.default.copyItem(atPath: TestData.path("video/regift-test-file.mov"), toPath: renamed)
        let arguments = ["--fps", "5", "--duration", "2", "--width", "120", "--quiet"]
        let named = dir.appendingPathComponent("named.gif").path
        let other = dir.appendingPathComponent("\(name).gif").path
        let a = try Shell.lapse(
            ["gif", TestData.path("video/regift-test-file.mov"), "-o", named, "--overwrite"] + arguments)
        let b = try Shell.lapse(["gif", renamed, "-o", other, "--overwrite"] + arguments)
        #expect(a.status == 0 && b.status == 0, "\(a.stderr) \(b.stderr)")
        let same = FileManager.default.contents(atPath: named) == FileManager.default.contents(atPath: other)
        #expect(same && FileManager.default.fileExists(atPath: other))
        let picture = dir.appendingPathComponent("hopper").path
        try? FileManager.default.removeItem(atPath: picture)
        try FileManager.default.copyItem(atPath: TestData.path("images/pillow/hopper.jpg"), toPath: picture)
        let still = dir.appendingPathComponent("hopper.gif").path
        let jpeg = dir.appendingPathComponent("hopper-jpg.gif").path
        let c = try Shell.lapse(["gif", picture, "-o", still, "--overwrite", "--quiet"])
        let d = try Shell.lapse(["gif", TestData.path("images/pillow/hopper.jpg"), "-o", jpeg, "--overwrite", "--quiet"]
        )
        #expect(c.status == 0 && d.status == 0, "\(c.stderr) \(d.stderr)")
        let alike = FileManager.default.contents(atPath: still) == FileManager.default.contents(atPath: jpeg)
        #expect(alike && FileManager.default.fileExists(atPath: still))
    }

    @Test func imagesWithDelay() throws {
        let dir = TestData.scratchDirectory("gif-cli")
        let out = dir.appendingPathComponent("seq.gif").path
        let result = try Shell.lapse([
            "gif", TestData.path("video/synthetic/rgba_png_seq"), "--delay", "0.25",
            "--scale", "1", "-o", out, "--json"
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let json = try #require(try JSONSummary.parse(result.stdoutData))
        // Frames 3 and 4, 8 and 9 of this sequence are identical: merged, their delays summed.
        #expect(json["delays"] as? [Int] == [25, 25, 50, 25, 25, 25, 50, 25])
        let info = try Shell.run("gifsicle", ["--info", out])
        #expect(info.stdout.contains("loop forever"))
        #expect(info.stdout.contains("8 images"))
    }

    /// #18 item 11 through the built `lapse`: the GIF of a VP9 video with alpha (a disc in a half-transparent
    /// ring, its alpha wobbling around 128 from lossy coding) is as transparent as the lossless PNGs of the same
    /// content: no see-through pixel inside the shape (one whose four neighbours are opaque in the PNG), and at
    /// most 0.3 % of the pixels different, on the shape's edge. The GIF decoded by ffmpeg at 10 fps.
    @Test func transparentVP9GivesNoSeeThroughRing() throws {
        let out = TestData.scratchDirectory("gif-alpha").appendingPathComponent("alpha.gif").path
        let r = try Shell.lapse([
            "gif", TestData.path("video/synthetic/alpha_vp9_160x120.webm"), "--scale", "1", "-o", out, "--quiet"
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let frames = try FFmpegReference.frames(out, filters: "fps=10", size: (160, 120))
        #expect(frames.count == 10)
        let dir = TestData.path("video/synthetic/rgba_png_seq")
        for (i, f) in frames.prefix(10).enumerated() {
            let png = try FFmpegReference.frames("\(dir)/frame\(String(format: "%03d", i + 1)).png", size: (160, 120))[
                0]
            let (mismatches, inside) = TransparencyCheck.compare(f, against: png)
            #expect(inside == 0, "frame \(i): \(inside) see-through pixels inside the shape")
            #expect(mismatches <= 160 * 120 * 3 / 1000, "frame \(i): \(mismatches) pixels")
        }
    }
}
