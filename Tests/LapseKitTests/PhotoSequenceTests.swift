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
    /// found in each picture, against the one the pictures show, read by eye from them at 8 pixels a degree (2880
    /// wide): the walker crosses a road to the foot of a flight of steps (its foot 18–20° left of the first photo's
    /// centre column, 27° left of the second's) and climbs it (the flight's axis about 40°, 33° and 21° left in the
    /// third, fourth and fifth), each read to about 5° (the third less sharply: the camera stands right of the
    /// flight, which runs from 33° to 44° left across that picture). Each found within 20° of that.
    ///
    /// Not against what GPS and compass say (the track's bearing from the first photo to the last, 9.3 m, less
    /// the stripped compass heading of each centre column): they put the way ahead 15° right to 7° left of the
    /// centre columns, 20–46° right of the steps (34° on average), and the compass's turns from photo to photo
    /// differ from the clouds' (at infinity, so a pure turn): between the fourth and fifth photos it turns 6° right
    /// where the clouds shift as for a turn of 5–15° left.
    ///
    /// With `copies`, each photo also carries the camera's own reduced copy (its real 1440 × 720 JPEG, stored as the
    /// camera stores it), from which the analysis then works: held to the same.
    @Test(arguments: [false, true])
    func theWalkWithoutItsCompass(copies: Bool) async throws {
        let folder = dir.appendingPathComponent(copies ? "walk-copies" : "walk")
        var pictures: [PixelBuffer] = []
        var previews: [[UInt8]] = []
        var positions: [(Double, Double)] = []
        var times: [String] = []
        for k in 1...5 {
            let path = TestData.path("pano360/geovisio_gopromax_walk/\(k).jpg")
            let m = try PhotoMetadata(url: URL(fileURLWithPath: path))
            pictures.append(try DecodedImage(url: URL(fileURLWithPath: path)).pixels(width: 2880, height: 1440))
            let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let copy = try #require(m.preview)
            previews.append(Array(file[copy]))
            positions.append((m.coordinate!.latitude, m.coordinate!.longitude))
            #expect(m.gpsImageDirection != nil) // the compass, which the photos written below leave out
            times.append(try #require(m.dateTime))
        }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for k in pictures.indices {
            try GeotaggedPhoto.write(
                pictures[k], to: folder.appendingPathComponent("\(k + 1).jpg").path, latitude: positions[k].0,
                longitude: positions[k].1, dateTime: times[k], previewJPEG: copies ? previews[k] : nil)
        }
        let (summary, warnings) = try await hyperlapse(folder.path, copies ? "walk-copies" : "walk")
        let found = summary.orientations.map { angleDifference(from: $0.heading, to: $0.view ?? .nan) }
        let shown: [Double] = [-20, -27, -40, -33, -21]
        print(
            """
            walk\(copies ? " (copies)" : ""): travel in the pictures \(found.map { String(format: "%.1f", $0) }), \
            the pictures show \(shown); \(String(describing: summary.stabilization)); \(warnings)
            """
        )
        #expect(found.count == 5)
        for (f, s) in zip(found, shown) { #expect(abs(angleDifference(from: s, to: f)) <= 20) }
    }

    /// The real ride with World Lock on (the camera keeps its picture turned to the world while the bicycle circles)
    /// under GPSImgDirection tags written from the track (172° to 18° over the five frames): the pictures' own turns
    /// are followed, the tags that contradict them left out with a warning, and the view stays on one place in the
    /// world (it swung 73° and 92° between the last frames when the tags posed them).
    @Test func theWorldLockRideFollowsThePictures() async throws {
        let folder = TestData.path("pano360/trekview_worldlock_bike")
        let names = ["000001", "000006", "000008", "000015", "000029"].map { "GS010013-worldlock_\($0).jpg" }
        // The turns the sky shows, read independently: the circular shift of the gradients of its band (85° to 47°
        // above the horizon, 0.25° a column; green) that lines two pictures up.
        let sky = try names.map { name in
            try DecodedImage(url: URL(fileURLWithPath: folder + "/" + name)).pixels(width: 1440, height: 720)
        }
        func gradients(_ p: PixelBuffer) -> [Float] {
            func y(_ x: Int, _ r: Int) -> Float { Float(p.bytes[(r * p.width + (x + p.width) % p.width) * 4 + 1]) }
            var g: [Float] = []
            for r in 21..<170 {
                for x in 0..<p.width { g.append(abs(y(x + 1, r) - y(x, r)) + abs(y(x, r) - y(x, r - 1))) }
            }
            let mean = g.reduce(0, +) / Float(g.count)
            return g.map { $0 - mean }
        }
        let bands = sky.map(gradients)
        var skyTurns: [Double] = []
        for k in 1..<bands.count {
            var best = (shift: 0, score: -Float.infinity)
            for shift in -200...200 {
                var score: Float = 0
                for r in 0..<149 {
                    for x in 0..<1440 {
                        score += bands[k - 1][r * 1440 + x] * bands[k][r * 1440 + (x + shift + 1440) % 1440]
                    }
                }
                if score > best.score { best = (shift, score) }
            }
            skyTurns.append(-Double(best.shift) / 4) // the sky moving right: the camera turned left
        }
        let (summary, warnings) = try await hyperlapse(folder, "worldlock")
        let frames = summary.orientations
        let turns = zip(frames, frames.dropFirst()).map { angleDifference(from: $0.heading, to: $1.heading) }
        let tags = zip(frames, frames.dropFirst()).map { angleDifference(from: $0.sourceHeading, to: $1.sourceHeading) }
        let inPicture = frames.map { angleDifference(from: $0.heading, to: $0.view ?? .nan) }
        print("world lock: sky turns \(skyTurns), posed \(turns), tags \(tags); view in the pictures \(inPicture)")
        print(warnings)
        #expect(frames.count == 5)
        // World Lock: the sky stays in place but for the clouds' drift (1.5–5.3° right between these frames).
        #expect(skyTurns.allSatisfy { abs($0) <= 6 })
        #expect(tags.filter { abs($0) > 60 }.count == 2) // what the tags say
        for (posed, seen) in zip(turns, skyTurns) {
            #expect(abs(posed) <= 5)
            #expect(abs(posed - seen) <= 10)
        }
        // The same place in the world, so the same place in these world-locked pictures, frame after frame.
        for (a, b) in zip(inPicture, inPicture.dropFirst()) { #expect(abs(angleDifference(from: a, to: b)) <= 6) }
        #expect(!frames[3].from.contains("metadata") && !frames[4].from.contains("metadata"))
        #expect(frames[3].from.contains("pixels") && frames[4].from.contains("pixels"))
        #expect(warnings.contains { $0.contains("headings of 2 frames disagree") && $0.contains("World Lock") })
    }
}
