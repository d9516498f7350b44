// report.html: the page a reviewer opens from disk or an artifact (docs/reports.md).
export { dataBlock, renderHtml } from './page.js';
export { episodeView, type ViewerData, viewerData } from './viewer-data.js';
