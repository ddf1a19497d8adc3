// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseMedia
import TestSupport
import Testing

@Suite struct ViewCLITests {
    let dir = TestData.scratchDirectory("viewcli")

    /// A 2048×1024 copy of a real 360° photo (made by the ffmpeg CLI).
    func panorama() throws -> String {
        let path = dir.appendingPathComponent("pano.png").path
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-i", TestData.path("pano360/trekview_360/R0014760.JPG"),
                "-vf", "scale=2048:1024", "-frames:v", "1", path
            ])
        #expect(r.status == 0, "\(r.stderr)")
        return path
    }

    func leftovers() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial") }
    }

    @Test func help() throws {
        let r = try Shell.lapse(["view", "--help"])
        #expect(r.status == 0)
        for option in [
            "--heading", "--pitch", "--roll", "--fov", "--size", "--pano-heading", "--interp", "--overwrite",
            "Examples:"
        ] {
            #expect(r.stdout.contains(option), "help lacks \(option)")
        }
    }

    @Test("renders the view ffmpeg v360 renders, as PNG and JPEG")
    func rendersView() throws {
        let pano = try panorama()
        let png = dir.appendingPathComponent("view.png").path
        let r = try Shell.lapse([
            "view", pano, "--heading", "250", "--pitch", "-10", "--roll", "5", "--fov", "80",
            "--size", "480x270", "--pano-heading", "40", "-o", png
        ])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("wrote \(png)"))
        let ours = try DecodedImage(url: URL(fileURLWithPath: png)).pixels()
        #expect(ours.width == 480 && ours.height == 270)
        // yaw = heading − panorama heading = 210° = −150°; v_fov from the 16:9 size.
        let vfov = 2 * atan(tan(40 * Double.pi / 180) * 270 / 480) * 180 / .pi
        let reference = try #require(
            try FFmpegReference.frames(
                pano,
                filters:
                    "v360=input=e:output=flat:h_fov=80:v_fov=\(vfov):yaw=-150:pitch=-10:roll=5:interp=linear"
                    + ":w=480:h=270",
                size: (480, 270)
            ).first)
        let ssim = ImageMetrics.ssim(ours, reference)
        #expect(ssim >= 0.99, "SSIM \(ssim)")

        let jpg = dir.appendingPathComponent("view.jpg").path
        let j = try Shell.lapse([
            "view", pano, "--heading", "250", "--pitch", "-10", "--roll", "5", "--fov", "80",
            "--size", "480x270", "--pano-heading", "40", "-o", jpg, "--interp", "lanczos"
        ])
        #expect(j.status == 0, "\(j.stderr)")
        let probe = try FFmpegReference.probe(
            jpg, ["-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0"])
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,480,270")
        let decoded = try DecodedImage(url: URL(fileURLWithPath: jpg)).pixels()
        #expect(ImageMetrics.psnr(decoded, ours) > 28)
        #expect(try leftovers().isEmpty)
    }

    @Test("default view: 1280×720 facing the panorama's centre, --json summary")
    func defaults() throws {
        let pano = try panorama()
        let out = dir.appendingPathComponent("default.png").path
        let r = try Shell.lapse(["view", pano, "-o", out, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let json = try #require(try JSONSummary.parse(r.stdoutData))
        #expect(json["width"] as? Int == 1280 && json["height"] as? Int == 720 && json["output"] as? String == out)
        #expect(json["panorama_width"] as? Int == 2048)
        let image = try DecodedImage(url: URL(fileURLWithPath: out))
        #expect(image.displayWidth == 1280 && image.displayHeight == 720)
    }

    @Test("an existing output is kept without --overwrite and replaced with it")
    func overwrite() throws {
        let pano = try panorama()
        let out = dir.appendingPathComponent("exists.png").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: out))
        let refused = try Shell.lapse(["view", pano, "--size", "64x64", "-o", out])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("--overwrite"))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "keep me")
        let replaced = try Shell.lapse(["view", pano, "--size", "64x64", "-o", out, "--overwrite"])
        #expect(replaced.status == 0)
        #expect(try DecodedImage(url: URL(fileURLWithPath: out)).displayWidth == 64)
        #expect(try leftovers().isEmpty)
    }

    @Test(arguments: [
        (["view"], "give the panorama"),
        (["view", "p.jpg"], "-o VIEW.png"),
        (["view", "p.jpg", "-o", "v.gif"], "must end in .png, .jpg or .jpeg"),
        (["view", "p.jpg", "-o", "v.png", "--fov", "180"], "--fov takes a number from 1 to 179"),
        (["view", "p.jpg", "-o", "v.png", "--fov", "abc"], "--fov takes a number"),
        (["view", "p.jpg", "-o", "v.png", "--pitch", "95"], "--pitch takes a number from -90 to 90"),
        (["view", "p.jpg", "-o", "v.png", "--interp", "nearest"], "--interp takes one of bilinear, bicubic, lanczos"),
        (["view", "p.jpg", "-o", "v.png", "--size", "0x10"], "--size takes"),
        (["view", "p.jpg", "-o", "v.png", "--quality", "0"], "--quality takes"),
        (["view", "a.jpg", "b.jpg", "-o", "v.png"], "exactly one panorama"),
        (["view", "p.jpg", "-o", "v.png", "--zoom", "2"], "unknown option --zoom"),
        (["view", "p.rgba", "--bench", "3"], "--bench needs --raw")
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let r = try Shell.lapse(arguments)
        #expect(r.status == 64)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.contains("usage: lapse view"))
    }

    /// A size the image encoder cannot take is refused before anything is rendered (issue #42: 16384x16384 took
    /// 3.2 GB, then the encoder refused it); the largest it takes in one dimension is rendered.
    @Test func aSizeTheEncoderCannotTakeIsRefusedFirst() throws {
        let pano = try panorama()
        for ext in ["png", "jpg"] {
            let out = dir.appendingPathComponent("huge.\(ext)").path
            let (r, kB) = try Shell.lapseMeasured(["view", pano, "--size", "16384x16384", "-o", out])
            #expect(r.status == 64, "\(r.stderr)")
            #expect(r.stderr.hasPrefix("error: --size 16384x16384 is more than the image encoder takes\n"))
            #expect(!r.stderr.contains("IMGUTILS"), "\(r.stderr)")
            #expect(kB < 200 * 1024, "peak \(kB) kB")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        let wide = dir.appendingPathComponent("wide.png").path
        let r = try Shell.lapse(["view", pano, "--size", "16384x64", "-o", wide, "-y"])
        #expect(r.status == 0, "\(r.stderr)")
        let written = try DecodedImage(url: URL(fileURLWithPath: wide))
        #expect(written.storedWidth == 16384 && written.storedHeight == 64)
    }

    @Test("unreadable or missing panoramas fail with exit 1 and no output file")
    func badInput() throws {
        let out = dir.appendingPathComponent("never.png").path
        let missing = try Shell.lapse(["view", dir.appendingPathComponent("nope.jpg").path, "-o", out])
        #expect(missing.status == 1 && missing.stderr.contains("no such file"))
        let text = dir.appendingPathComponent("text.jpg").path
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: text))
        let bad = try Shell.lapse(["view", text, "-o", out])
        #expect(bad.status == 1)
        #expect(!FileManager.default.fileExists(atPath: out))
        let noDir = try Shell.lapse(["view", try panorama(), "-o", "/nonexistent-dir/v.png"])
        #expect(noDir.status == 1 && noDir.stderr.contains("does not exist"))
        // A picture too wide for a panorama: the error names it (one line, exit 1).
        let wide = dir.appendingPathComponent("wide.png").path
        let made = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=red:s=40000x2",
                "-frames:v", "1", wide
            ])
        #expect(made.status == 0, "\(made.stderr)")
        let tooWide = try Shell.lapse(["view", wide, "-o", out])
        #expect(
            tooWide.status == 1 && tooWide.stderr.contains("error: \(wide): panorama of 40000x2 pixels is too large"),
            "\(tooWide.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("--bench renders raw RGBA frames and reports times")
    func bench() throws {
        let raw = dir.appendingPathComponent("frames.rgba").path
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=s=512x256:d=0.2:r=10",
                "-f", "rawvideo", "-pix_fmt", "rgba", raw
            ])
        #expect(r.status == 0)
        let b = try Shell.lapse(["view", raw, "--raw", "512x256", "--bench", "5", "--size", "64x36", "--json"])
        #expect(b.status == 0, "\(b.stderr)")
        let json = try #require(try JSONSummary.parse(b.stdoutData))
        #expect(json["frames"] as? Int == 5)
        #expect((json["render_seconds"] as? Double ?? -1) >= 0)
    }
}
