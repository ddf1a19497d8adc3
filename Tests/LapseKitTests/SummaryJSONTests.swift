// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit
import TestSupport
import Testing

/// The jobs' summaries encode themselves as `--json` prints them (snake_case by the encoder): real runs, their
/// JSON read back, every key there and its value the summary's.
@Suite struct SummaryJSONTests {
    let dir = TestData.scratchDirectory("summary-json")

    static func json(_ value: some Encodable) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try #require(try JSONSerialization.jsonObject(with: encoder.encode(value)) as? [String: Any])
    }

    /// Real photos into a video, the video cut, two cuts joined with a GIF, and a GIF of the video.
    @Test func videoClipConcatAndGIFSummaries() async throws {
        let photos = try FileManager.default.contentsOfDirectory(atPath: TestData.path("images/opensfm_lund/images"))
            .filter { $0.lowercased().hasSuffix(".jpg") }.sorted().prefix(3)
            .map { TestData.path("images/opensfm_lund/images/\($0)") }
        try #require(photos.count == 3)
        var video = VideoJob(
            inputs: photos.map { ImageInput(url: URL(fileURLWithPath: $0), duration: 0.5) },
            output: dir.appendingPathComponent("v.mp4")
        )
        video.size = (320, 240)
        video.frameRate = FrameRate(25)
        video.overwrite = true
        let v = try await video.run()
        let vj = try Self.json(v)
        #expect(
            Set(vj.keys) == [
                "output", "width", "height", "frames", "fps", "frame_rate", "duration", "bytes", "images", "skipped"
            ])
        #expect(vj["output"] as? String == v.output.path && vj["frames"] as? Int == v.frames && v.frames == 38)
        #expect(vj["fps"] as? Double == 25 && vj["frame_rate"] as? String == "25/1" && vj["images"] as? Int == 3)
        #expect(vj["width"] as? Int == 320 && vj["bytes"] as? Int64 == v.bytes && vj["skipped"] as? Int == 0)

        let options = ClipOptions(start: 0.2, end: 1.2)
        var clip = ClipJob(input: v.output, output: dir.appendingPathComponent("c.mp4"), options: options)
        clip.overwrite = true
        let c = try await clip.run()
        let cj = try Self.json(c)
        #expect(
            Set(cj.keys) == [
                "output", "start", "end", "keyframe_time", "video_frames", "hidden_frames", "frames_past_end",
                "edit_list", "duration", "media_duration", "audio", "accurate", "container"
            ])
        #expect(cj["output"] as? String == clip.output.path && cj["accurate"] as? Bool == false)
        #expect(cj["video_frames"] as? Int == c.shownFrames && c.shownFrames == 25)
        #expect(cj["edit_list"] as? Bool == c.usesEditList && cj["container"] as? String == "mp4")

        var concat = ConcatJob(inputs: [v.output, v.output], output: dir.appendingPathComponent("j.mp4"))
        concat.gif = dir.appendingPathComponent("j.gif")
        concat.overwrite = true
        let j = try await concat.run()
        let jj = try Self.json(j)
        #expect(
            Set(jj.keys) == [
                "output", "bytes", "inputs", "frames", "duration", "input_durations", "credits", "gif", "gif_bytes"
            ])
        #expect(jj["inputs"] as? [String] == [v.output.path, v.output.path] && jj["frames"] as? Int == 2 * v.frames)
        #expect(
            jj["credits"] is NSNull && jj["gif"] as? String == concat.gif?.path
                && jj["gif_bytes"] as? Int64 == j.gif?.bytes)

        var gif = GIFJob(source: .video(try #require(c.output)), output: dir.appendingPathComponent("g.gif"))
        gif.overwrite = true
        let g = try await gif.run()
        let gj = try Self.json(g)
        #expect(
            Set(gj.keys) == [
                "output", "width", "height", "frames", "delays", "duration", "loop", "bytes", "frames_sampled",
                "decode_errors"
            ])
        #expect(gj["frames"] as? Int == g.gif.frameCount && gj["delays"] as? [Int] == g.gif.delays)
        #expect(gj["loop"] as? Int == 0 && gj["frames_sampled"] as? Int == g.framesSampled)
    }
}
