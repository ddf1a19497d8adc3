// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import LapseKit
import Synchronization
import TestSupport
import Testing

/// Your own photo sequences as cameras take them: every photo a frame, stops and duplicates left out, and the
/// direction of travel found in real photos whose compass is stripped.
@Suite(.serialized) struct PhotoSequenceTests {
    let dir = TestData.scratchDirectory("sequence")
    static let road = 60.0
    static let start = Coordinate(uncheckedLatitude: 52.44, longitude: 6.89)

    func hyperlapse(_ folder: String, _ name: String) async throws -> (HyperlapseJob.Summary, [String]) {
        var s = HyperlapseSettings()
        s.source = .local(directory: URL(fileURLWithPath: folder))
        s.size = FrameSize(width: 320, height: 180)
        s.output = dir.appendingPathComponent(name + ".mp4")
        let said = Mutex<[String]>([])
        let summary = try await s.makeJob(overwrite: false).run(
            feed: try await s.makeFeed(), warning: { w in said.withLock { $0.append(w) } })
        return (summary, said.withLock { $0 })
    }

    /// 40 photos from inside a car, the car standing for 5 of them (the street the same, the people moving, the GPS
    /// 1.5 m noisy): 36 frames, the stop's first photo kept, every other photo a frame.
    @Test func aStopIsOneFrame() async throws {
        let streets = try InCarComposite.streetFrames(step: 3, count: 36)
        var random = InCarComposite.Random(seed: 3)
        var pictures: [PixelBuffer] = []
        var positions: [(Double, Double)] = []
        let spacing = 3 * InCarComposite.metresPerFrame
        for (k, street) in streets.enumerated() {
            let here = Self.start.destination(bearing: Self.road, distance: spacing * Double(k))
            // The stop: at photo 20 the car stands for four more photos.
            for extra in 0..<(k == 20 ? 5 : 1) {
                pictures.append(InCarComposite.picture(street: street, mount: -90, random: &random))
                let jitter = extra == 0 ? 0 : 1.5
                let p = here.destination(bearing: random.uniform(0, 360), distance: random.uniform(0, jitter))
                positions.append((p.latitude, p.longitude))
            }
        }
        #expect(pictures.count == 40)
        let folder = try GeotaggedPhoto.folder(dir.appendingPathComponent("stop"), pictures, positions: positions)
        let (summary, warnings) = try await hyperlapse(folder, "stop")
        let report = try #require(summary.stabilization)
        print("stop: \(summary.frames) frames, \(report.stationaryDropped) dropped; warnings \(warnings)")
        #expect(summary.routePoints == 40)
        #expect(summary.frames == 36)
        #expect(report.stationaryDropped == 4)
        let kept = summary.orientations.map(\.pano)
        #expect(kept.contains("IMG_0020.JPG"))
        for k in 21...24 { #expect(!kept.contains(String(format: "IMG_%04d.JPG", k))) }
    }

    /// One real photo ten times over, its GPS 1.5 m noisy each time (a camera left on a tripod, or a burst): one
    /// frame, posed as the photo is, and a warning that the camera did not move.
    @Test func theSamePhotoTenTimesIsOneFrame() async throws {
        let picture = try DecodedImage(url: URL(fileURLWithPath: TestData.path("pano360/trekview_360/GSAG2002.JPG")))
            .pixels(
                width: 2048, height: 1024)
        var random = InCarComposite.Random(seed: 9)
        let here = Coordinate(uncheckedLatitude: 52.443412, longitude: 6.889934)
        let positions = (0..<10).map { _ -> (Double, Double) in
            let p = here.destination(bearing: random.uniform(0, 360), distance: random.uniform(0, 1.5))
            return (p.latitude, p.longitude)
        }
        let folder = try GeotaggedPhoto.folder(
            dir.appendingPathComponent("same"), [PixelBuffer](repeating: picture, count: 10), positions: positions)
        let (summary, warnings) = try await hyperlapse(folder, "same")
        print("same photo: \(summary.frames) frames; warnings \(warnings)")
        #expect(summary.frames == 1)
        #expect(try #require(summary.stabilization).stationaryDropped == 9)
        #expect(warnings.contains { $0.contains("did not move") })
    }

    /// The real GoPro MAX walk (5 photos, 1–3 m apart) with its compass tags stripped: the direction of travel
    /// found in each picture, against the one its GPS track (first to last photo, 9.3 m) and the stripped compass
    /// heading of its centre column give. The two differ by 27° on average (found −14° … −26°, GPS and compass
    /// −7° … +15°), the same in every photo to within about 10°: a bias of the camera's compass or of 9 m of GPS,
    /// not of the pictures, which show the walker making for the steps 21° left of the first photo's centre column
    /// and climbing them in the last. So each photo is held to 40° of what GPS and compass say (their own uncertainty:
    /// a compass good to 10–15°, and 3 m of GPS noise over 9 m, about 25°), and to 15° of their bias in common
    /// (1.5 σ of a compass good to 10°; here at most 10.3°).
    ///
    /// With `copies`, each photo also carries the camera's own reduced copy (its real 1440 × 720 JPEG, stored as the
    /// camera stores it), from which the analysis then works: held to the same (when written, it found −11° … −24°
    /// where the photos themselves gave −14° … −26°).
    @Test(arguments: [false, true])
    func theWalkWithoutItsCompass(copies: Bool) async throws {
        let folder = dir.appendingPathComponent(copies ? "walk-copies" : "walk")
        var pictures: [PixelBuffer] = []
        var previews: [[UInt8]] = []
        var positions: [(Double, Double)] = []
        var compass: [Double] = []
        var times: [String] = []
        for k in 1...5 {
            let path = TestData.path("pano360/geovisio_gopromax_walk/\(k).jpg")
            let m = try PhotoMetadata(url: URL(fileURLWithPath: path))
            pictures.append(try DecodedImage(url: URL(fileURLWithPath: path)).pixels(width: 2880, height: 1440))
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let copy = try #require(m.preview)
            previews.append(Array(file[copy]))
            positions.append((m.coordinate!.latitude, m.coordinate!.longitude))
            compass.append(try #require(m.gpsImageDirection))
            times.append(try #require(m.dateTime))
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for k in pictures.indices {
            try GeotaggedPhoto.write(
                pictures[k], to: folder.appendingPathComponent("\(k + 1).jpg").path, latitude: positions[k].0,
                longitude: positions[k].1, dateTime: times[k], previewJPEG: copies ? previews[k] : nil)
        }
        let (summary, warnings) = try await hyperlapse(folder.path, copies ? "walk-copies" : "walk")
        let first = Coordinate(uncheckedLatitude: positions[0].0, longitude: positions[0].1)
        let last = Coordinate(uncheckedLatitude: positions[4].0, longitude: positions[4].1)
        let bearing = first.initialBearing(to: last)
        let found = summary.orientations.map { angleDifference(from: $0.heading, to: $0.view ?? .nan) }
        let said = compass.map { angleDifference(from: $0, to: bearing) }
        print(
            """
            walk\(copies ? " (copies)" : ""): travel in the pictures \(found.map { String(format: "%.1f", $0) }), \
            GPS and compass say \(said.map { String(format: "%.1f", $0) }); \
            \(String(describing: summary.stabilization)); \(warnings)
            """
        )
        #expect(found.count == 5)
        let offsets = zip(found, said).map { angleDifference(from: $1, to: $0) }
        let bias = offsets.reduce(0, +) / Double(offsets.count)
        for offset in offsets {
            #expect(abs(offset) <= 40)
            #expect(abs(offset - bias) <= 15)
        }
    }
}
