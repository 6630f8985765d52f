export { debugRepository } from './debugRepository.js';
export { sandboxAdmission } from './sandboxAdmission.js';
