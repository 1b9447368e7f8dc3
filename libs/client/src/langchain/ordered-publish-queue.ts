// Moved to the recording core (every adapter publishes through it); kept here for the imports that name this file.
export { OrderedPublishQueue, type PublishFailure, ToolHistoryPublishError } from '../recording/ordered-publish-queue';
