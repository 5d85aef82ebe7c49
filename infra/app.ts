/**
 * The CDK app (`cdk.json` runs it): the staging and production stages of the pet store inventory service.
 * See docs/deploying.md.
 */
import { createInventoryApp } from './constructs/inventory-app';

createInventoryApp();
