// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseGeo
import LapseMedia
import LapseNet
import TestSupport
import Testing

@testable import LapsePanorama

@Suite struct LocalPhotoSourceTests {
    static let trekview = TestData.path("pano360/trekview_360")
    static let gsag = Coordinate(uncheckedLatitude: 52.443412, longitude: 6.889934)
    static let ricoh = Coordinate(uncheckedLatitude: 53.182050, longitude: -2.861264)

    @Test func readsGPSSizeAndDateFromRealPhotos() throws {
        let m = try PhotoMetadata(url: URL(fileURLWithPath: Self.trekview + "/GSAG2002.JPG"))
        #expect(m.width == 5760 && m.height == 2880)
        #expect(try #require(m.coordinate).distance(to: Self.gsag) < 1)
        #expect(m.dateTime?.hasPrefix("2020:05:09") == true)
        #expect(m.gpsImageDirection == nil)
        #expect(m.poseHeading == 0) // GoPro's placeholder
        #expect(m.posePitch == 0 && m.poseRoll == 0) // levelled by the camera (XMP attributes)
        let r = try PhotoMetadata(url: URL(fileURLWithPath: Self.trekview + "/R0014760.JPG"))
        #expect(r.width == 5376 && r.height == 2688)
        #expect(r.posePitch == 0 && r.poseRoll == 0 && r.poseHeading == nil) // XMP elements
        #expect(try #require(r.coordinate).distance(to: Self.ricoh) < 1) // west longitude is negative
    }

    @Test func folderOfRealPanoramas() async throws {
        let source = try LocalPhotoSource(directory: URL(fileURLWithPath: Self.trekview))
        #expect(source.panoramas.map(\.id) == ["GSAG2002.JPG", "R0014760.JPG"]) // capture order
        #expect(source.skipped.isEmpty)
        // No compass heading in either, and thousands of kilometres apart: two trips, neither heading taken from
        // the other (the bearing across the gap says nothing of either; the placeholders within a trip:
        // PhotoSequenceTests and the CLI's two-trips test).
        #expect(Self.gsag.distance(to: Self.ricoh) > LocalPhotoSource.tripGap)
        #expect(source.panoramas.map(\.heading) == [0, 0])
        #expect(source.headingSources["GSAG2002.JPG"] == "none")
        #expect(source.headingSources["R0014760.JPG"] == "none")
        let found = try await source.nearest(
            to: [
                Self.gsag.destination(bearing: 90, distance: 20),
                Coordinate(uncheckedLatitude: 50, longitude: 0)
            ], radius: 50)
        #expect(found[0]?.id == "GSAG2002.JPG" && found[1] == nil)
        let image = try await source.image(for: source.panoramas[1], resolution: .atLeast(width: 1024))
        #expect(image.pixels.width == 1024 && image.pixels.height == 512)
        let reference = try ffmpegRaw(
            Self.trekview + "/R0014760.JPG", filters: "scale=1024:512:flags=bicubic",
            width: 1024, height: 512)
        #expect(ImageMetrics.psnr(image.pixels, reference) > 30)
    }

    /// A camera's level sensor in GPano `PosePitchDegrees`/`PoseRollDegrees` poses the photo: its tilt and roll.
    @Test func levelFromXMPPose() throws {
        let folder = TestData.scratchDirectory("local-level")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (k, level) in [(pitch: 2.5, roll: -1.25), nil].enumerated() {
            try GeotaggedPhoto.write(
                PixelBuffer(width: 64, height: 32), to: folder.appendingPathComponent("P\(k).JPG").path,
                latitude: 52, longitude: 6 + Double(k) * 1e-4, dateTime: "2026:11:30 10:00:0\(k)", level: level)
        }
        let source = try LocalPhotoSource(directory: folder)
        #expect(source.panoramas.map(\.tilt) == [2.5, 0] && source.panoramas.map(\.roll) == [-1.25, 0])
    }

    @Test func flatPhotosWithGPSAreSkippedNotUsed() throws {
        // OpenSfM's Lund photos: real GPS, but perspective 1024×768 pictures.
        #expect {
            _ = try LocalPhotoSource(directory: URL(fileURLWithPath: TestData.path("images/opensfm_lund/images")))
        } throws: { error in
            let e = error as? LapseError
            return e?.code == .invalidInput && e!.reason.contains("29 skipped")
                && e!.reason.contains("1024×768 is not 2:1")
        }
    }

    @Test func mixedFolderListsWhatItSkipsAndWhy() throws {
        let dir = TestData.scratchDirectory("local-panos")
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        try fm.createSymbolicLink(
            atPath: dir.appendingPathComponent("a.jpg").path, withDestinationPath: Self.trekview + "/GSAG2002.JPG")
        try fm.createSymbolicLink(
            atPath: dir.appendingPathComponent("flat.jpg").path,
            withDestinationPath: TestData.path("images/opensfm_lund/images/01.jpg"))
        // A 2:1 picture without EXIF (ffmpeg writes none).
        let r = try Shell.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=s=512x256",
                "-frames:v", "1", dir.appendingPathComponent("nogps.jpg").path
            ])
        #expect(r.status == 0)
        // GSAG2002 with an XMP GPano heading spliced in right after SOI.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.trekview + "/R0014760.JPG")))
        let xmp = Array(
            "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><rdf:Description GPano:PoseHeadingDegrees=\"77.5\"/></x:xmpmeta>"
                .utf8)
        let length = xmp.count + 2
        bytes.insert(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + xmp, at: 2)
        try Data(bytes).write(to: dir.appendingPathComponent("posed.jpg"))
        try Data("not a jpeg".utf8).write(to: dir.appendingPathComponent("broken.jpg"))

        let source = try LocalPhotoSource(directory: dir)
        #expect(Set(source.panoramas.map(\.id)) == ["a.jpg", "posed.jpg"])
        let skipped = Dictionary(uniqueKeysWithValues: source.skipped.map { ($0.file, $0.reason) })
        #expect(
            skipped["flat.jpg"] == "not equirectangular: 1024×768 is not 2:1 and no GPano tags place it on its sphere")
        #expect(skipped["nogps.jpg"] == "no GPS position in EXIF")
        #expect(skipped["broken.jpg"] == "not a readable JPEG")
        let posed = try #require(source.panoramas.first { $0.id == "posed.jpg" })
        #expect(posed.heading == 77.5 && source.headingSources["posed.jpg"] == "PoseHeadingDegrees")
    }

    /// A JPEG's header is read up to its image data, not a whole megabyte, and its XMP searched in its XMP packets:
    /// every real 360° photo here gives what the whole first megabyte gave (size, the GPano tags).
    @Test func headersAreReadUpToTheImageData() throws {
        let folders = ["pano360/trekview_360", "pano360/geovisio_gopromax_walk", "pano360/trekview_gpano_pose"]
        var checked = 0
        for folder in folders {
            let dir = TestData.path(folder)
            for name in try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            where name.lowercased().hasSuffix(".jpg") {
                let path = dir + "/" + name
                let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)).prefix(1 << 20))
                let handle = try #require(FileHandle(forReadingAtPath: path))
                let head = PhotoMetadata.readHeader(handle)
                try handle.close()
                #expect(head.count < whole.count && Array(whole.prefix(head.count)) == head, "\(name)")
                let m = try PhotoMetadata(url: URL(fileURLWithPath: path))
                #expect(PhotoMetadata.jpegSize(whole).map { [$0.0, $0.1] } == [m.width ?? -1, m.height ?? -1])
                for (tag, value) in [
                    ("PoseHeadingDegrees", m.poseHeading), ("PosePitchDegrees", m.posePitch),
                    ("PoseRollDegrees", m.poseRoll)
                ] {
                    #expect(PhotoMetadata.xmpValue("GPano:" + tag, in: whole) == value, "\(name) \(tag)")
                }
                #expect(PhotoMetadata.xmpText("GPano:ProjectionType", in: whole) == m.projectionType, "\(name)")
                #expect(PhotoMetadata.xmpPackets(head).count < 64 * 1024, "\(name)")
                checked += 1
            }
        }
        #expect(checked >= 15)
    }

    /// Damaged headers (bytes changed, segments cut short, lengths of 0, 1 or 65535, fill bytes without end) are read
    /// without a trap and never past the limit.
    @Test func damagedHeadersAreSurvived() throws {
        let real = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: Self.trekview + "/R0014760.JPG")).prefix(70_000))
        let dir = TestData.scratchDirectory("damaged-headers")
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var random = SplitMix64(seed: 38) // the same damage every run
        var cases: [[UInt8]] = [
            [0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 100_000), [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x00],
            [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x01, 0x41], [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + Array("http".utf8)
        ]
        for k in 0..<40 {
            var bytes = Array(real.prefix(Int.random(in: 2...real.count, using: &random)))
            for _ in 0..<(k % 8) {
                bytes[Int.random(in: 2..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            cases.append(bytes)
        }
        for (k, bytes) in cases.enumerated() {
            let path = dir.appendingPathComponent("\(k).jpg").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let handle = try #require(FileHandle(forReadingAtPath: path))
            let head = PhotoMetadata.readHeader(handle, limit: 4096)
            try handle.close()
            #expect(head.count <= 4096 && Array(bytes.prefix(head.count)) == head)
            _ = PhotoMetadata.xmpPackets(head)
            _ = try PhotoMetadata(url: URL(fileURLWithPath: path)) // no trap, whatever it finds
        }
    }

    /// A folder that gives no photo says why, and where they may be: a file given as the folder; photos one level
    /// down (a camera card's `DCIM/100GOPRO`: folders are not searched), named with the `local:` to give; photos
    /// skipped for one reason (said once) or several (the first one's, named).
    @Test func aFolderWithoutPhotosSaysWhereTheyMayBe() throws {
        let dir = TestData.scratchDirectory("no-photos")
        defer { try? FileManager.default.removeItem(at: dir) }
        let fm = FileManager.default
        func reason(_ url: URL) -> String? {
            do {
                _ = try LocalPhotoSource(directory: url)
                return nil
            } catch {
                return (error as? LapseError)?.reason
            }
        }
        let file = URL(fileURLWithPath: Self.trekview + "/GSAG2002.JPG")
        #expect(reason(file) == "a file, not a folder of photos (a 360° video is read as video:FILE)")
        let card = dir.appendingPathComponent("card")
        try fm.createDirectory(at: card.appendingPathComponent("100GOPRO"), withIntermediateDirectories: true)
        try fm.createDirectory(at: card.appendingPathComponent("MISC"), withIntermediateDirectories: true)
        #expect(reason(card) == "no JPEG files")
        try fm.createSymbolicLink(
            atPath: card.appendingPathComponent("100GOPRO/G0010001.JPG").path, withDestinationPath: file.path)
        let nested = card.appendingPathComponent("100GOPRO").path
        #expect(
            reason(card)
                == "no JPEG files (subfolders are not searched: 100GOPRO has some; give local:\(nested))")
        let mixed = dir.appendingPathComponent("mixed")
        try fm.createDirectory(at: mixed, withIntermediateDirectories: true)
        try fm.createSymbolicLink(
            atPath: mixed.appendingPathComponent("a.jpg").path,
            withDestinationPath: TestData.path("images/opensfm_lund/images/01.jpg"))
        try Data([0xFF, 0xD8, 0xFF]).write(to: mixed.appendingPathComponent("b.jpg"))
        let said = reason(mixed) ?? ""
        #expect(said.hasPrefix("no usable 360° photo (2 skipped; the first, a.jpg: not equirectangular"), "\(said)")
    }
}

@Suite struct VideoPanoramaSourceTests {
    static let clip = TestData.path("pano360/valiant360_overpass/overpass-clip.mp4")

    /// A 4-second drive north at 25 m/s, one point a second.
    static func track() -> Route {
        let start = Coordinate(uncheckedLatitude: 37.7749, longitude: -122.4194)
        let t0 = Date(timeIntervalSince1970: 1_700_000_000)
        return Route(
            points: (0...4).map {
                TrackPoint(
                    start.destination(bearing: 0, distance: Double($0) * 25),
                    time: t0.addingTimeInterval(Double($0)))
            })
    }

    @Test func everyNthFrameWithoutATrack() async throws {
        let source = try VideoPanoramaSource(url: URL(fileURLWithPath: Self.clip))
        #expect(source.width == 2048 && source.height == 1024)
        let frames = source.frames(every: 30)
        #expect(frames.map(\.time!) == [0, 1.001, 2.002, 3.003])
        await #expect(throws: LapseError.self) {
            _ = try await source.nearest(to: [Self.track().points[0].coordinate], radius: 10)
        }
    }

    @Test func trackPlacesFramesAtRoutePoints() async throws {
        let source = try VideoPanoramaSource(url: URL(fileURLWithPath: Self.clip), track: Self.track())
        let points = try Self.track().resampled(every: 20)
        let found = try await source.nearest(to: points.map(\.coordinate), radius: 10)
        // 20 m apart at 25 m/s: 0.8 s apart.
        let times = found.map { $0?.time }
        #expect(times.count == 6)
        for (i, t) in times.dropLast().enumerated() { #expect(abs((t ?? -1) - Double(i) * 0.8) < 0.01) }
        #expect(found.allSatisfy { $0.map { abs($0.heading) < 1e-6 || abs($0.heading - 360) < 1e-6 } == true })
        // The frame equals ffmpeg's frame at that time (frame 24 at 0.8008 s ≤ 0.8 < frame 25: frame 23).
        let image = try await source.image(for: try #require(found[1]), resolution: .atLeast(width: 1024))
        #expect(image.pixels.width == 1024 && image.pixels.height == 512)
        let reference = try ffmpegRaw(
            Self.clip, filters: "select=eq(n\\,23),scale=1024:512:flags=bicubic", width: 1024, height: 512)
        #expect(ImageMetrics.psnr(image.pixels, reference) > 30)
        // Far from the track: no frame.
        #expect(
            try await source.nearest(to: [Coordinate(uncheckedLatitude: 37.7, longitude: -122.4)], radius: 10) == [nil])
    }
}
