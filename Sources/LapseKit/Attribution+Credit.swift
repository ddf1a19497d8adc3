// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation

extension Attribution {
    /// ``source`` of Google Street View panoramas.
    public static let googleStreetView = "Google Street View"
    /// ``source`` of Panoramax pictures.
    public static let panoramax = "Panoramax"
    /// ``source`` of Mapillary images.
    public static let mapillary = "Mapillary"

    /// The credit a frame of this imagery carries in the picture (``HyperlapseJob/creditPosition``), parts
    /// joined by `" · "`:
    /// - Google Street View: "Google Maps" and the panorama's copyright line, e.g. "Google Maps · © 2024 Google"
    ///   (just "Google Maps" when the metadata has none): the Map Tiles API policies ask for the Google Maps logo,
    ///   or the text "Google Maps" where the logo cannot be shown legibly (a credit of a frame's 1/40 height);
    /// - Panoramax: author and licence, e.g. "© Zoë Éléonore · CC-BY-SA-4.0 · Panoramax" (the parts the picture
    ///   has, and "Panoramax");
    /// - Mapillary: the creator's username and the licence, e.g. "© alice · CC BY-SA 4.0 · Mapillary" (Mapillary's
    ///   terms: CC BY-SA 4.0, attribution to the contributor and Mapillary);
    /// - any other source: the copyright line (or "© author") and the licence, when there is one of them; nil
    ///   otherwise — your own photos and videos need no credit, and nothing is drawn.
    public var credit: String? {
        let holder = copyright ?? author.map { $0.hasPrefix("©") ? $0 : "© " + $0 }
        switch source {
        case Self.googleStreetView:
            return (["Google Maps"] + [copyright].compactMap { $0 }).joined(separator: " · ")
        case Self.panoramax, Self.mapillary:
            return [holder, license, source].compactMap { $0 }.joined(separator: " · ")
        default:
            let parts = [holder, license].compactMap { $0 }
            return parts.isEmpty ? nil : parts.joined(separator: " · ")
        }
    }

    /// Whether the source's terms require the credit in the picture: Google Street View (Google's attribution
    /// rules), Panoramax and Mapillary (their pictures are under licences such as CC BY-SA that require attribution).
    public var requiresCredit: Bool { Self.creditedSources.contains(source) }

    /// The sources whose imagery must carry its credit in the picture.
    static let creditedSources: Set = [googleStreetView, panoramax, mapillary]

    /// Whether ``licence`` is a Creative Commons Attribution-ShareAlike licence, any version ("CC-BY-SA-4.0",
    /// "CC BY-SA 2.0", a creativecommons.org `/by-sa/` URL): a video made from it must be shared under CC BY-SA
    /// too (4.0 accepts works under the earlier versions).
    public var isShareAlike: Bool {
        guard let license else { return false }
        let normal = license.lowercased().replacingOccurrences(of: " ", with: "-").replacingOccurrences(
            of: "_", with: "-")
        return normal.contains("cc-by-sa") || normal.contains("creativecommons.org/licenses/by-sa")
    }
}
