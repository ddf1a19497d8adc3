// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseKit

enum ClipCommand: Command {
    static let name = "clip"
    static let summary = "Cut a time range out of a local or online video without re-encoding"
    static let start = Option("--start", value: "T", help: "start of the range (default 0: the start of the media)")
    static let end = Option(
        "--end", value: "T", help: "end of the range (after --start; clamped to the media's end; default: the end)")
    static let duration = Option("--duration", value: "T", help: "length of the range (instead of --end)")
    static let accurate = Option(
        "--accurate",
        help: "frame-exact start and end: re-encode the video (same size, libx264, CRF 18), audio cut to match")
    static let noAudio = Option("--no-audio", help: "leave the sound out")
    static let audio = Option(
        "--audio", value: "FILE", help: "a soundtrack from FILE's audio, cut to the clip's length (re-encoded to AAC)")
    static let audioMode = Option(
        "--audio-mode", value: "MODE",
        help: "replace (default): FILE's audio only; mix: mixed with the clip's own sound")
    /// A network input's `--timeout` (``NetworkOptions``), explained as a media read uses it.
    static let timeout = NetworkOptions.timeout.described(
        """
        network inputs: give up after this long without data, reconnections included (a few seconds more for one \
        reconnection; default 15)
        """)

    static let page = CommandHelp(
        usage: """
            lapse clip INPUT -o OUTPUT [--start T] [--end T | --duration T] [--accurate]
                       [--no-audio | --audio FILE [--audio-mode replace|mix]] [--overwrite]
            """,
        about: """
            Cut a time range out of a video file, an http(s):// URL (MP4/MOV, with or without Range support)
            or an HLS playlist (.m3u8). Only the part of the input that is needed is read.

            By default the video and audio are copied without re-encoding, starting at the keyframe at or before
            --start (the time used is printed). In MP4/MOV/M4V an edit list makes playback begin at --start exactly;
            in MKV playback begins at that keyframe. Rotation metadata and stream languages are kept, MP4/MOV get
            +faststart, and timestamps begin at 0. The container follows OUTPUT's extension: .mp4 .mov .m4v .mkv.

            Times (T) are seconds (12.5) or [HH:]MM:SS[.mmm] (1:02:03.5), from the start of the media.
            """,
        sections: [
            HelpSection(
                "Options",
                [
                    OutputOptions.output.described("the clip to write (required)"), start, end, duration, accurate,
                    noAudio, audio, audioMode, timeout, OutputOptions.overwrite
                ], more: [GlobalOptions.row(progress: true)])
        ],
        examples: [
            "lapse clip holiday.mov -o beach.mp4 --start 1:05 --duration 10",
            "lapse clip https://example.com/talk.mp4 -o intro.mp4 --start 0 --end 30",
            "lapse clip https://example.com/live/index.m3u8 -o goal.mkv --start 12:30 --end 12:45",
            "lapse clip match.mp4 -o goal.mp4 --start 754.2 --end 761 --accurate",
            "lapse clip ride.mp4 -o ride-music.mp4 --start 0 --duration 20 --audio song.m4a --audio-mode mix"
        ])

    static func run(_ arguments: inout Arguments, console: Console) async throws {
        let out = try OutputOptions(&arguments)
        let startGiven = try arguments.time(Self.start)
        let end = try arguments.time(Self.end)
        let duration = try arguments.time(Self.duration)
        let accurate = arguments.flag(Self.accurate)
        let noAudio = arguments.flag(Self.noAudio)
        let audioFile = try arguments.value(Self.audio)
        let mode = try arguments.choice(Self.audioMode, ["replace", "mix"])
        let timeout = try NetworkOptions(&arguments).timeout
        let overwrite = out.overwrite
        let positionals = try arguments.positionals()

        guard positionals.count == 1, let input = positionals.first else {
            throw LapseError.usage(
                positionals.isEmpty
                    ? "give one INPUT (a file or an http(s) URL)"
                    : "give one INPUT, not \(positionals.count)")
        }
        let output = try out.required("FILE")
        // As ffmpeg's -ss and -to: from the start, to the end, unless given.
        let start = startGiven ?? 0
        if end != nil && duration != nil { throw LapseError.usage("give --end or --duration, not both") }
        let stop = end ?? duration.map { start + $0 } ?? .infinity
        if let duration, duration <= 0 { throw LapseError.usage("--duration must be more than 0") }
        if stop <= start {
            throw LapseError.usage(
                startGiven == nil
                    ? "--end must be more than 0"
                    : "--end (\(TimeValue.format(stop))) must come after --start (\(TimeValue.format(start)))")
        }
        if noAudio && audioFile != nil { throw LapseError.usage("give --no-audio or --audio FILE, not both") }
        if mode != nil && audioFile == nil { throw LapseError.usage("--audio-mode needs --audio FILE") }

        var options = ClipOptions(start: start, end: stop)
        options.accurate = accurate
        if let timeout { options.input.readTimeout = timeout }
        if noAudio { options.audio = .none }
        if let audioFile {
            let audio = URL(location: audioFile)
            options.audio = mode == "mix" ? .mix(path: audio) : .replace(path: audio)
        }
        var job = ClipJob(input: URL(location: input), output: URL(fileURLWithPath: output), options: options)
        job.overwrite = overwrite
        let result = try await job.run(progress: console.progress)
        for warning in result.warnings { console.warn(warning) }

        var lines: [String] = []
        if accurate {
            lines.append(
                "cut \(TimeValue.format(result.start))–\(TimeValue.format(result.end)) frame-exact (re-encoded video)")
        } else {
            let note =
                result.usesEditList
                ? "playback starts at \(TimeValue.format(result.start)) (edit list)"
                : "playback starts at the keyframe"
            // A keyframe before the media's start: the input's own edit list hides the frames from it.
            let keyframe =
                result.keyframeTime < -0.0005
                ? "\(String(format: "%.3f", -result.keyframeTime)) s before the media's start (hidden by its edit list)"
                : "\(TimeValue.format(result.keyframeTime)) (\(String(format: "%.3f", result.keyframeTime)) s)"
            lines.append("keyframe used: \(keyframe); \(note)")
        }
        let hiddenParts = [
            result.hiddenFrames > 0 ? "+\(result.hiddenFrames) before the start" : nil,
            result.framesPastEnd > 0 ? "\(result.framesPastEnd) after the end" : nil
        ].compactMap { $0 }
        let hidden = hiddenParts.isEmpty ? "" : " (\(hiddenParts.joined(separator: " and ")), hidden by the edit list)"
        lines.append(
            """
            wrote \(output): \(String(format: "%.3f", result.duration)) s, \
            \(counted(result.shownFrames, "video frame"))\(hidden)
            """
                + (result.hasAudio ? ", audio" : ", no audio"))
        console.summary(
            lines,
            json: result)
    }
}
