// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension HyperlapseJob {
    /// The GIF and report page an earlier run wrote beside `output` (as its `OUT.job.json` records them) that still
    /// exist and are not among `except` (what this run writes): a rerun with `overwrite` leaves them as they were,
    /// showing the earlier run, so the command line names them. Empty when there is no readable job file.
    public static func earlierOutputs(of output: URL, except: [URL]) -> [(kind: String, file: URL)] {
        let jobFile = output.replacingExtension(with: ".job.json")
        guard let data = FileManager.default.contents(atPath: jobFile.path),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return [] }
        let written = Set(except.map { $0.standardizedFileURL.path })
        let folder = jobFile.deletingLastPathComponent()
        return [("GIF", object["gif"]), ("report", object["report"])].compactMap { kind, value in
            guard let text = value as? String else { return nil }
            // Relative to the job file (``HyperlapseSettings/withOutputs(relativeTo:)``).
            let path = (text.hasPrefix("/") ? URL(fileURLWithPath: text) : folder.appendingPathComponent(text))
                .standardizedFileURL.path
            guard !written.contains(path), FileManager.default.fileExists(atPath: path) else { return nil }
            return (kind, URL(fileURLWithPath: path))
        }
    }

    /// The render's progress detail: the frames written so far (its units are the feed's points).
    static func framesWritten(_ n: Int) -> String { n == 1 ? "1 frame" : "\(n) frames" }

    /// The credit of a route planned by OSRM (OpenStreetMap data, under the ODbL), for ``routeCredit``.
    public static let openStreetMapRouteCredit =
        "Route data © OpenStreetMap contributors (ODbL), https://www.openstreetmap.org/copyright"
    /// The credit of a route planned by Google Maps Platform (the Routes API policies ask for "Google Maps" where
    /// its results are shown other than on a Google map), for a route whose ``Route/copyright`` is Google's.
    public static let googleRouteCredit = "Route: Google Maps"

    /// The route's credit: ``routeCredit`` when set, else the one `feed`'s route calls for.
    func routeCredit(of feed: any PanoramaFeed) -> String? {
        routeCredit ?? (feed.routeCopyright == Route.googleCopyright ? Self.googleRouteCredit : nil)
    }

    /// What the sidecar and the metadata say when any imagery is CC BY-SA (``Attribution/isShareAlike``).
    public static let shareAlikeNotice =
        """
        This video is a derivative of CC-BY-SA imagery and is licensed under CC BY-SA 4.0: \
        https://creativecommons.org/licenses/by-sa/4.0/
        """

    /// The imagery's credit lines: `copyright` (the user's own line, `--copyright`) and every distinct
    /// attribution that names a holder, a licence or a provider whose terms ask for credit (``Attribution/credit``);
    /// your own photos and videos, which name none, are not credited (their source's name is no copyright line).
    static func imageryCredits(_ attributions: [Attribution], copyright: String?) -> [String] {
        [copyright].compactMap { $0 } + attributions.filter { $0.credit != nil }.map(\.line)
    }

    /// What to credit, a line each: ``imageryCredits(_:copyright:)`` (or why there is none), the route's credit,
    /// and the video's licence when the imagery's licence requires one. The sidecar lists these; the report page
    /// shows them (``Summary/creditLines``).
    static func creditLines(_ attributions: [Attribution], routeCredit: String? = nil, copyright: String? = nil)
        -> [String]
    {
        var lines = imageryCredits(attributions, copyright: copyright)
        if lines.isEmpty {
            lines = [attributions.isEmpty ? "(the source gave no attribution)" : "(your own imagery: no credit needed)"]
        }
        if let routeCredit { lines.append(routeCredit) }
        if attributions.contains(where: \.isShareAlike) { lines.append(shareAlikeNotice) }
        return lines
    }

    /// The credits sidecar (`OUT.credits.txt`): a heading naming the feed,
    /// ``creditLines(_:routeCredit:copyright:)`` with the imagery's credits as a "- " list, and the version of lapse
    /// that made it.
    static func creditsText(
        _ attributions: [Attribution], feed: String, routeCredit: String? = nil, copyright: String? = nil
    ) -> String {
        let listed = Set(imageryCredits(attributions, copyright: copyright))
        let lines =
            ["Imagery credits (\(feed)):"]
            + creditLines(attributions, routeCredit: routeCredit, copyright: copyright).map {
                listed.contains($0) ? "- " + $0 : $0
            }
            + ["Made with lapse \(lapseVersion)."]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The MP4's `copyright` and `comment` tags: the `copyright` tag holds the imagery's credits
    /// (``imageryCredits(_:copyright:)``), the route's, and the video's licence when the imagery's requires one —
    /// and is left out when there is none of them (your own imagery without `--copyright`); the `comment` names the
    /// imagery's sources and the same credits.
    static func creditsMetadata(
        _ attributions: [Attribution], routeCredit: String? = nil, copyright: String? = nil
    ) -> [String: String] {
        let imagery = attributions.map(\.line).joined(separator: "; ")
        let shareAlike = attributions.contains(where: \.isShareAlike)
        let holders = [
            imageryCredits(attributions, copyright: copyright).joined(separator: "; "), routeCredit ?? "",
            shareAlike ? "video licensed under CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/" : ""
        ].filter { !$0.isEmpty }
        var comment = "Hyperlapse made with lapse \(lapseVersion). Imagery: " + imagery
        if let copyright { comment += ". " + copyright }
        if let routeCredit { comment += ". " + routeCredit }
        if shareAlike { comment += ". " + shareAlikeNotice }
        var tags = ["comment": comment]
        if !holders.isEmpty { tags["copyright"] = holders.joined(separator: "; ") }
        return tags
    }

    /// The credit of a frame blended from two panoramas' (``crossfade``): both, a line each, when they differ.
    static func blendedCredit(_ a: String?, _ b: String?) -> String? {
        guard let a, let b, a != b else { return a ?? b }
        return a + "\n" + b
    }
}

/// Puts a frame's credit into the picture: draws it into the video frame, and makes the GIF's frame from the
/// frame without it — resized to the GIF's size, then the credit drawn at that size (legible, not shrunk).
struct FrameCrediting: Sendable {
    /// Nil draws no credit.
    let overlay: CreditOverlay?
    /// The GIF's frame size, nil when there is no GIF.
    let gifSize: (width: Int, height: Int)?

    /// Makes `frame`'s GIF frame (nil without a GIF), then draws `credit` into `frame` in place: only its box is
    /// written, and a buffer no one else holds is not copied.
    /// - Throws: ``LapseError`` `.codec` when resizing fails.
    func apply(_ credit: String?, to frame: inout PixelBuffer) throws -> PixelBuffer? {
        var gif = try gifSize.map { try frame.resized(width: $0.width, height: $0.height) }
        if let overlay, let credit {
            if gif != nil { overlay.draw(credit, into: &gif!) }
            overlay.draw(credit, into: &frame)
        }
        return gif
    }
}

extension HyperlapseReport {
    /// An empty report of `feed`'s points: a route from Google Maps Platform (``PanoramaFeed/routeCopyright``) is
    /// drawn on no map and credited there (the Routes API policies: on a Google map, or without a map with Google's
    /// attribution); any other over OpenStreetMap's tiles.
    init(for feed: any PanoramaFeed) {
        self.init(positionsKnown: feed.positionsKnown, pointUnit: feed.pointUnit)
        if feed.routeCopyright == Route.googleCopyright {
            basemap = .none
            routeCredit = HyperlapseJob.googleRouteCredit
        }
    }
}
