// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseTelemetry
import Synchronization

/// Frames of an equirectangular 360° video as a hyperlapse's panoramas.
///
/// Without a track the video has no positions: every `frameStep`-th frame becomes a stop, the road is taken to
/// run the way the video's centre column faces (`panoHeading`, compass degrees), and "distance along the route"
/// counts frames — so keyframes by frame number work as expected.
public final class VideoPanoramaFeed: PanoramaFeed, Sendable {
    /// The video (a file or an http(s) URL).
    public let url: URL
    /// The video: checked to be 2:1, with its size, duration and frame rate.
    public let video: VideoPanoramaSource
    /// Every `frameStep`-th frame is a stop (1: every frame).
    public let frameStep: Int
    /// Compass heading of the video's centre column at its first frame, degrees (the rest follow from the pictures).
    public let panoHeading: Double
    /// `video NAME`: the file's name.
    public var name: String { "video \(url.lastPathComponent)" }
    let decoder: SequentialDecoder
    /// A second pass over the video, decoded straight to the analysis size (it runs ahead of the render's).
    private let analysisDecoder: SequentialDecoder
    /// Where each decoder runs: off the concurrency pool (a decode holds its decoder's lock), one call at a time,
    /// in the order the calls are made.
    private let decoding = BlockingQueue(label: "lapse.video-decoder")
    private let analysisDecoding = BlockingQueue(label: "lapse.video-analysis-decoder")
    /// Presentation times of the video's frames, seconds.
    private let times: [Double]
    /// Frames taken: every ``frameStep``-th of the video's.
    public var pointCount: Int { (times.count + frameStep - 1) / frameStep }
    /// Frames in the video (of which every ``frameStep``-th is a point).
    public var frameCount: Int { times.count }
    /// 0: a video without a track has no positions.
    public var distance: Double { 0 }
    /// Frames of one camera's recording, counted rather than placed; decoded to Y′CbCr as they are where the
    /// video is BT.709 4:2:0; equirectangular, or a GoPro MAX `.360` file's atlas (``VideoPanoramaSource/projection``).
    public var traits: PanoramaFeedTraits {
        var t = PanoramaFeedTraits()
        t.pointUnit = "video frames"
        t.yuvImages = decoder.yuv
        t.followsCamera = true
        t.positionsKnown = false
        t.continuousCapture = true
        t.sourceProjection = video.projection
        return t
    }
    /// Frames looked up at a time (a video's lookups are cheap).
    public var lookupWindow: Int { 100 }
    /// Frames about a tenth of a second apart are analysed: every third of a 30 fps video at a frame step of
    /// 1, or, when the video's reference frames are that close (H.264 and H.265 with B-frames: every fourth
    /// frame, typically), the reference frames at least that far apart, and the analysis decodes no other
    /// frame. This is the stride, or the median step between the frames analysed.
    public let analysisStride: Int
    /// The stops analysed when only reference frames are decoded (nil: every ``analysisStride``-th).
    private let analysedStops: Set<Int>?

    /// - Parameters:
    ///   - url: the video file (or URL).
    ///   - frameStep: use every N-th frame, ≥ 1.
    ///   - panoHeading: compass heading of the video's centre column, degrees.
    ///   - equirectangular: take it as equirectangular though nothing says so (see
    ///     ``VideoPanoramaSource/projection(of:url:equirectangular:)``).
    ///   - telemetry: the video's own telemetry, read by the caller: a `.360` file's gravity levels its frames
    ///     (``VideoPanoramaSource/level(at:)``).
    /// - Throws: ``LapseError`` `.invalidInput` when the video cannot be opened or is not a 360° video.
    public init(
        url: URL, frameStep: Int = 1, panoHeading: Double = 0, equirectangular: Bool = false,
        telemetry: CameraTelemetry? = nil
    ) throws {
        self.url = url
        self.frameStep = max(1, frameStep)
        self.panoHeading = panoHeading
        let reader = try VideoFrameReader(url)
        video = try VideoPanoramaSource(
            reader: reader, url: url, equirectangular: equirectangular, telemetry: telemetry)
        let packets = try VideoFrameReader(url).framesFromPackets()
        let frameRate = video.frameRate
        let yuv = reader.yuvFramesAvailable
        decoder = SequentialDecoder(
            reader, yuv: yuv, times: packets?.times,
            wanted: { [step = self.frameStep] in $0 % step == 0 })
        times = try decoder.frameTimes()
        let small = try VideoFrameReader(url)
        // Frames of 2048·k × 1024·k come as Y′CbCr, at their size, for SphereImage to reduce (no conversion to
        // RGBA); others as RGBA scaled to the analysis size.
        let analysisYUV =
            video.projection == .equirectangular && small.yuvFramesAvailable
            && SphereImage.reducesDirectly(width: small.codedWidth, height: small.codedHeight)
        if case .goproEAC(let eac) = video.projection {
            // A .360 file's atlas at a scale that holds the analysis picture's detail, unfolded there.
            small.outputSize = eac.atlasSize(forEquirectangularWidth: SphereImage.standardWidth)
        } else if !analysisYUV {
            small.outputSize = (SphereImage.standardWidth, SphereImage.standardWidth / 2)
        }
        // Analysed at a quarter of the pixels or fewer, where the deblocking filter's edges average out.
        small.skipsLoopFilter = true
        let stride = max(1, Int((frameRate / Double(self.frameStep) / 10).rounded()))
        let step = self.frameStep
        if let reference = packets?.isReference, reference.count == times.count,
            let stops = Self.referenceStops(reference, frameStep: step, stride: stride)
        {
            // Only reference frames are decoded for the analysis, and those analysed converted.
            small.skipsNonReferenceFrames = true
            let frames = Set(stops.map { $0 * step })
            analysedStops = Set(stops)
            let gaps = zip(stops.dropFirst(), stops).map { $0 - $1 }.sorted()
            analysisStride = gaps.isEmpty ? stride : gaps[gaps.count / 2]
            analysisDecoder = SequentialDecoder(
                small, yuv: analysisYUV, times: times, outputs: reference.indices.filter { reference[$0] },
                wanted: { frames.contains($0) })
        } else {
            analysedStops = nil
            analysisStride = stride
            analysisDecoder = SequentialDecoder(
                small, yuv: analysisYUV, times: times, wanted: { $0 % (step * stride) == 0 })
        }
    }

    /// The stops to analyse when only reference frames are decoded: the first stop whose frame is a reference
    /// frame, each next one at least `stride` stops on, and the last such stop; nil when that would leave more
    /// than twice the stride between two, before the first or after the last (reference frames too far apart:
    /// every frame is decoded then), or when every frame is a reference frame anyway.
    static func referenceStops(_ reference: [Bool], frameStep: Int, stride: Int) -> [Int]? {
        guard reference.contains(false) else { return nil }
        let stops = (reference.count + frameStep - 1) / frameStep
        let candidates = (0..<stops).filter { reference[$0 * frameStep] }
        guard let first = candidates.first, first <= 2 * stride else { return nil }
        var picked = [first]
        for n in candidates.dropFirst() where n - picked.last! >= stride { picked.append(n) }
        if let last = candidates.last, last != picked.last! { picked.append(last) }
        // The frames after the last one analysed follow its motion: no more than the stride of them either.
        guard zip(picked.dropFirst(), picked).allSatisfy({ $0 - $1 <= 2 * stride }),
            stops - 1 - picked.last! <= 2 * stride
        else {
            return nil
        }
        return picked
    }

    /// The stops chosen among the reference frames when only those are decoded; else every
    /// ``analysisStride``-th stop seen, and the last.
    public func isAnalysed(_ stop: HyperlapseStop, seen: Int, last: Bool) -> Bool {
        let n = Int(stop.routePoint.distanceAlongRoute)
        guard let analysedStops else { return seen % analysisStride == 0 || last }
        return analysedStops.contains(n)
    }

    /// Stop `n` is frame `n · frameStep`, at "distance" n along a road that runs the way the video's centre faces.
    public func lookup(_ range: Range<Int>) async throws -> [HyperlapseStop?] {
        let origin = Coordinate(uncheckedLatitude: 0, longitude: 0)
        let attribution = Attribution(source: url.lastPathComponent)
        return range.map { n in
            let point = RoutePoint(
                coordinate: origin, distanceAlongRoute: Double(n), heading: normalizeDegrees(panoHeading))
            // The frame number makes the id unique (two frames may share a timestamp; stops with equal ids are
            // dropped).
            let level = video.level(at: times[n * frameStep])
            return HyperlapseStop(
                panoramaID: String(format: "frame %d (t=%.3f)", n * frameStep, times[n * frameStep]), routePoint: point,
                pose: PanoramaPose(heading: panoHeading, tilt: level?.tilt ?? 0, roll: level?.roll ?? 0),
                attribution: attribution, levelUncertainty: level == nil ? nil : 2)
        }
    }

    /// The frame of the stop (stops must be asked for in increasing order, a few at a time: the video is
    /// decoded front to back once). `region` is ignored: frames come whole.
    public func image(for stop: HyperlapseStop, region: PanoramaRegion?) async throws -> PixelBuffer {
        let decoded = try await frame(of: stop)
        let pixels = try decoded.rgba()
        if case .yuv(let frame) = consume decoded { decoder.recycle(consume frame) }
        return pixels
    }

    /// The render's frame of `stop`, decoded on ``decoding`` (converted, if at all, by the caller).
    private func frame(of stop: HyperlapseStop) async throws -> SequentialDecoder.Picture {
        let number = Int(stop.routePoint.distanceAlongRoute) * frameStep
        return try await decoding.run { [decoder] in try decoder.frame(number: number) }
    }

    /// The frame of `stop`, whole (`region` does not matter: a frame is decoded whole).
    public func yuvImage(for stop: HyperlapseStop, region: PanoramaRegion? = nil) async throws -> YUVFrame? {
        switch try await frame(of: stop) {
        case .yuv(let picture): return picture
        case .rgba: throw LapseError(.other, name, "frames are decoded as RGBA")
        }
    }

    /// A segment renders from this stop on: the render's decoder starts at the keyframe before its frame, and
    /// the frames before that are not decoded at all.
    /// (Queued on the decoder's queue before the frames asked for next: the caller does not wait for a decode.)
    public func startRendering(at stop: HyperlapseStop) {
        let number = Int(stop.routePoint.distanceAlongRoute) * frameStep
        decoding.post { [decoder] in decoder.start(at: number) }
    }

    /// A frame the stabiliser dropped is not kept by the render's decoder. (Queued like ``startRendering(at:)``.)
    public func skip(_ stop: HyperlapseStop) {
        let number = Int(stop.routePoint.distanceAlongRoute) * frameStep
        decoding.post { [decoder] in decoder.discard(number: number) }
    }

    /// The render is done with the stop's frame (``yuvImage(for:region:)``): the next frames are copied into its
    /// planes.
    public func recycle(_ picture: consuming YUVFrame) {
        decoder.recycle(consume picture)
    }

    /// The job is over: the frames kept for later ones go.
    public func jobFinished() {
        decoder.releaseSpares()
        analysisDecoder.releaseSpares()
    }

    /// The stop's frame, small, from the video's analysis decoder.
    public func analysisImage(for stop: HyperlapseStop) async throws -> PixelBuffer {
        let decoded = try await analysisFrame(for: stop)
        let pixels = try decoded.rgba()
        if case .yuv(let frame) = consume decoded { analysisDecoder.recycle(consume frame) }
        let w = SphereImage.standardWidth
        if case .goproEAC(let eac) = video.projection { return try eac.equirectangular(pixels, width: w) }
        return pixels.width > w ? try pixels.resized(width: w, height: w / 2) : pixels
    }

    /// The stop's frame, reduced straight from its Y′CbCr to the analysis size where it can be.
    public func analysisPicture(for stop: HyperlapseStop) async throws -> SphereImage {
        if case .goproEAC = video.projection { return try SphereImage(try await analysisImage(for: stop)) }
        let decoded = try await analysisFrame(for: stop)
        switch consume decoded {
        case .yuv(let frame):
            let picture = try SphereImage(frame)
            analysisDecoder.recycle(consume frame)
            return picture
        case .rgba(let pixels): return try SphereImage(pixels)
        }
    }

    /// The analysis decoder's frame of a stop, as it decodes them (Y′CbCr at full size or RGBA at 1024 wide).
    private func analysisFrame(for stop: HyperlapseStop) async throws -> SequentialDecoder.Picture {
        let number = Int(stop.routePoint.distanceAlongRoute) * frameStep
        return try await analysisDecoding.run { [analysisDecoder] in try analysisDecoder.frame(number: number) }
    }
}

/// Decodes a video front to back once, handing out frames by number; frames asked for out of order are kept
/// until taken (at most the pipeline's concurrency of them). Every call takes the decoder's state under its mutex
/// for as long as it decodes: callers on the concurrency pool go through a ``BlockingQueue``.
final class SequentialDecoder: Sendable {
    private let state: Mutex<State>
    /// Frames come as Y′CbCr as decoded (``VideoFrameReader/nextYUVFrame()``) rather than RGBA.
    let yuv: Bool
    private let wanted: @Sendable (Int) -> Bool
    /// The frame numbers the decoder gives, in order, when it gives only some (reference frames); nil: all.
    private let outputs: [Int]?
    /// What the video is called in errors.
    private let name: String
    /// The video, opened again by the probes.
    private let location: URL
    /// Frames given out and given back (``recycle(_:)``), whose planes the next frames are copied into (about the
    /// frames between a decode and the render that gives it back).
    private let spares = SpareFrames(limit: 4)

    enum Picture: Sendable {
        case rgba(PixelBuffer)
        case yuv(YUVFrame)

        /// As RGBA (converted when decoded as Y′CbCr).
        func rgba() throws -> PixelBuffer {
            switch self {
            case .rgba(let pixels): return pixels
            case .yuv(let picture): return try picture.rgba()
            }
        }
    }

    /// The reader and where it is; only touched under ``state``'s lock.
    private struct State: ~Copyable {
        let reader: VideoFrameReader
        var decoded = 0
        /// Frames decoded so far (fewer than the frame numbers reached after ``start(at:)``).
        var framesDecoded = 0
        var times: [Double]?
        var waiting: [Int: Picture] = [:]
        /// Frames that will not be asked for after all.
        var discarded = Set<Int>()
        /// Index in `outputs` of the next frame the decoder gives.
        var cursor = 0
    }

    /// - Parameters:
    ///   - reader: the video's reader, given to the decoder's queue.
    ///   - yuv: decode to Y′CbCr (else RGBA).
    ///   - times: the frames' presentation times, when known (else ``frameTimes()`` learns them).
    ///   - outputs: the frame numbers the reader gives, in order, when it gives only some of them
    ///     (``VideoFrameReader/skipsNonReferenceFrames``); nil: every frame.
    ///   - wanted: which frame numbers will be asked for (the others are decoded and dropped).
    init(
        _ reader: sending VideoFrameReader, yuv: Bool, times: [Double]? = nil, outputs: [Int]? = nil,
        wanted: @escaping @Sendable (Int) -> Bool
    ) {
        name = reader.name
        location = reader.location
        state = Mutex(State(reader: reader, times: times))
        self.yuv = yuv
        self.outputs = outputs
        self.wanted = wanted
    }

    /// Frames decoded so far (fewer than the frame numbers reached after ``start(at:)``).
    var framesDecoded: Int { state.withLock { $0.framesDecoded } }

    /// Presentation times of every frame: as given, else from a decode of every frame.
    func frameTimes() throws -> [Double] {
        try state.withLock { state in
            if let times = state.times, !times.isEmpty { return times }
            var result: [Double] = []
            let probe = try VideoFrameReader(location)
            probe.outputSize = (2, 1)
            while let t = try probe.skipFrame() { result.append(t) }
            guard !result.isEmpty else { throw LapseError(.invalidInput, name, "no decodable frame") }
            state.times = result
            return result
        }
    }

    /// Starts decoding at the keyframe at or before frame `number` rather than at the first frame (a hyperlapse's
    /// segment that begins later), so the frames before that keyframe are not decoded. Nothing changes once a
    /// frame was decoded, nor when where the seek lands cannot be told (the video is then read from its start).
    func start(at number: Int) {
        state.withLock { state in
            guard outputs == nil, state.decoded == 0, state.waiting.isEmpty, number > 0, let times = state.times,
                number < times.count
            else { return }
            // A seek lands on the keyframe at or before its time (a tenth of a millisecond past the frame's, so that
            // rounding cannot take it one keyframe back); which frame that is, a reader of its own finds out first.
            let target = times[number] + 1e-4
            guard let probe = try? VideoFrameReader(location), (try? probe.seek(to: target)) != nil,
                let landed = try? probe.skipFrame(),
                let k = times.firstIndex(where: { abs($0 - landed) < 1e-6 }), k <= number
            else { return }
            do {
                try state.reader.seek(to: target)
                state.decoded = k
            } catch {
                // The decoder's position is unknown now: start again from the first frame.
                _ = try? state.reader.seek(to: 0)
            }
        }
    }

    /// A frame given out (as Y′CbCr) is no longer wanted: a later frame is copied into its planes.
    func recycle(_ frame: consuming YUVFrame) {
        spares.give(frame)
    }

    /// Lets the frames given back go.
    func releaseSpares() { spares.removeAll() }

    /// Frame `number` will not be asked for: it is not kept (nor converted, when not decoded yet).
    func discard(number: Int) {
        state.withLock { state in
            if state.waiting.removeValue(forKey: number) == nil, number >= state.decoded {
                state.discarded.insert(number)
            }
        }
    }

    /// Whether ascending `values` hold `value` (binary search).
    private static func sorted(_ values: [Int], contains value: Int) -> Bool {
        var low = 0
        var high = values.count
        while low < high {
            let mid = (low + high) / 2
            if values[mid] < value { low = mid + 1 } else { high = mid }
        }
        return low < values.count && values[low] == value
    }

    /// The number of the next frame out of the decoder, nil past the last.
    private func upcoming(_ state: borrowing State) -> Int? {
        guard let outputs else { return state.decoded }
        return state.cursor < outputs.count ? outputs[state.cursor] : nil
    }

    /// The decoder gave frame `number` at `time`: on to the next. A frame whose time is not the one its packet
    /// had means the frames given are not the ones expected (some left out, or others) and is an error.
    private func advance(_ state: inout State, past number: Int, time: Double?) throws {
        if outputs != nil {
            state.cursor += 1
            if let time, let times = state.times, number < times.count, abs(times[number] - time) > 1e-3 {
                throw LapseError(
                    .invalidInput, name,
                    String(
                        format: "frame %d decoded at %.3f s, not at %.3f s as its packet says", number, time,
                        times[number]))
            }
        }
        state.decoded = number + 1
        state.framesDecoded += 1
    }

    func frame(number: Int) throws -> Picture {
        try state.withLock { state in
            if let p = state.waiting.removeValue(forKey: number) { return p }
            while let next = upcoming(state), next <= number {
                // Frames that will not be asked for are decoded (the codec needs them) but not converted.
                guard next == number || (wanted(next) && !state.discarded.contains(next)) else {
                    state.discarded.remove(next)
                    guard let time = try state.reader.skipFrame() else {
                        throw LapseError(.invalidInput, name, "frame \(number) is past the end of the video")
                    }
                    try advance(&state, past: next, time: time)
                    continue
                }
                let reader = state.reader
                let decoded: (Double, Picture)? =
                    yuv
                    ? try reader.nextYUVFrame(spares: spares).map { ($0.time, .yuv($0.frame)) }
                    : try reader.nextFrame().map { ($0.time, .rgba($0.pixels)) }
                guard let (time, pixels) = decoded else {
                    throw LapseError(.invalidInput, name, "frame \(number) is past the end of the video")
                }
                try advance(&state, past: next, time: time)
                if next == number { return pixels }
                state.waiting[next] = pixels // asked for by a task that is running behind
            }
            if let outputs, !Self.sorted(outputs, contains: number), number <= outputs.last ?? -1 {
                throw LapseError(.other, name, "frame \(number) is not decoded (not a reference frame)")
            }
            if upcoming(state) == nil, state.waiting[number] == nil, number >= state.decoded {
                throw LapseError(.invalidInput, name, "frame \(number) is past the end of the video")
            }
            throw LapseError(.other, name, "frame \(number) was asked for twice")
        }
    }
}
